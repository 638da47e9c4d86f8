// SPDX-License-Identifier: MIT
// The applications' printf (goro.h): kprintf's line discipline
// (kernel/console.c) with %f, %e and %g (lib/printf_float.c). Compiled with
// vector registers: a variadic function saves the vector argument
// registers, where doubles arrive, only when it may use them; so it runs
// only on a G's or g0's stack, never in an interrupt handler.
#include <stdarg.h>
#include "goro.h"
#include "lib/printf.h"

int vprintf(const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int n = kvprintf(fmt_double, fmt, &aq);
    va_end(aq);
    return n;
}

int printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = kvprintf(fmt_double, fmt, &ap);
    va_end(ap);
    return n;
}
