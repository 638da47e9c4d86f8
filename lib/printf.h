// SPDX-License-Identifier: MIT
// Formatted output (lib/printf.c, pure). kprintf is for kernel code, which is compiled with
// general registers only and so cannot take doubles; printf (goro.h) is the
// applications' entry and adds %f. Both share fmt_format.
#ifndef GORO_PRINTF_H
#define GORO_PRINTF_H

#include <stdarg.h>
#include <stddef.h>

typedef void (*fmt_sink_fn)(void *ctx, const char *s, size_t n);
// Formats one %f/%e/%g conversion, consuming a double from *ap.
typedef void (*fmt_float_fn)(fmt_sink_fn sink, void *ctx, char conv, int width, int prec,
                             int flags, va_list *ap);
enum { FMT_LEFT = 1, FMT_ZERO = 2, FMT_PLUS = 4, FMT_SPACE = 8 };

// The fmt_float_fn for doubles (lib/printf_float.c, vector registers:
// never from an interrupt handler).
void fmt_double(fmt_sink_fn sink, void *ctx, char conv, int width, int prec, int flags, va_list *ap);

int fmt_format(fmt_sink_fn sink, void *ctx, fmt_float_fn ffn, const char *fmt, va_list *ap);
// Pads a formatted number in buf[0..n) to width per flags; shared by %f.
void fmt_emit_padded(fmt_sink_fn sink, void *ctx, const char *buf, size_t n, int width, int flags);

int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);

// Supplied by the machine (kernel/console.c), declared here so that every
// layer can print: kprintf formats into this core's line buffer and hands
// whole lines to console_write, which writes them under one lock.
int kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int kvprintf(fmt_float_fn ffn, const char *fmt, va_list *ap);
void console_write(const char *s, size_t n);
// Fatal paths: stop taking the console lock (another core may hold it forever).
void console_panic_mode(void);

#endif
