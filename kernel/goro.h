// SPDX-License-Identifier: MIT
// goro's public API: the one header an application includes.
// Go's names, C spelling. See DESIGN.md for the contracts.
#ifndef GORO_H
#define GORO_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// ---- applications ----------------------------------------------------------

struct goro_app {
    const char *name;
    const char *help;
    int (*main)(int argc, char **argv);
};

// Registers an application: `app=name` on the kernel command line runs
// main_fn as the main goroutine; when it returns, the machine exits with its
// return value.
#define GORO_APP(name_, help_, main_fn_)                                          \
    static const struct goro_app goro_app_##name_                                 \
        __attribute__((used, section(".goro_apps"), aligned(8))) = {              \
            #name_, help_, main_fn_                                               \
        }

// ---- output and exit -------------------------------------------------------

int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int vprintf(const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void exit(int code) __attribute__((noreturn));
void panic(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

// ---- machine ---------------------------------------------------------------

int num_cpu(void);
int core_id(void);
uint64_t nanotime(void);
uint64_t cputicks(void);                 // the TSC

#endif
