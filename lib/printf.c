// SPDX-License-Identifier: MIT
// printf's formatter: pure (no machine state), shared by kprintf (the
// console's, kernel/console.c), snprintf and the applications' printf
// (lib/printf_float.c adds %f).
#include <stdbool.h>
#include <stdint.h>
#include "lib/printf.h"
#include "lib/string.h"

static void emit_pad(fmt_sink_fn sink, void *ctx, char c, int n)
{
    char pad[16];
    memset(pad, c, sizeof pad);
    while (n > 0) {
        int k = n > 16 ? 16 : n;
        sink(ctx, pad, (size_t)k);
        n -= k;
    }
}

void fmt_emit_padded(fmt_sink_fn sink, void *ctx, const char *buf, size_t n, int width, int flags)
{
    int pad = width - (int)n;
    if (pad > 0 && !(flags & FMT_LEFT)) {
        if ((flags & FMT_ZERO) && n && (buf[0] == '-' || buf[0] == '+' || buf[0] == ' ')) {
            sink(ctx, buf, 1);
            buf++, n--;
        }
        emit_pad(sink, ctx, (flags & FMT_ZERO) ? '0' : ' ', pad);
    }
    sink(ctx, buf, n);
    if (pad > 0 && (flags & FMT_LEFT))
        emit_pad(sink, ctx, ' ', pad);
}

static size_t utoa(char *end, unsigned long long v, unsigned base, bool upper)
{
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    size_t n = 0;
    do {
        *--end = digits[v % base];
        v /= base;
        n++;
    } while (v);
    return n;
}

struct count_sink { fmt_sink_fn sink; void *ctx; int count; };

static void counting(void *c, const char *s, size_t n)
{
    struct count_sink *cs = c;
    cs->sink(cs->ctx, s, n);
    cs->count += (int)n;
}

int fmt_format(fmt_sink_fn sink0, void *ctx0, fmt_float_fn ffn, const char *fmt, va_list *ap)
{
    struct count_sink cs = { sink0, ctx0, 0 };
    fmt_sink_fn sink = counting;
    void *ctx = &cs;

    while (*fmt) {
        const char *p = fmt;
        while (*p && *p != '%')
            p++;
        if (p != fmt)
            sink(ctx, fmt, (size_t)(p - fmt));
        if (!*p)
            break;
        fmt = p + 1;

        int flags = 0, width = 0, prec = -1, lng = 0;
        for (;; fmt++) {
            if (*fmt == '-') flags |= FMT_LEFT;
            else if (*fmt == '0') flags |= FMT_ZERO;
            else if (*fmt == '+') flags |= FMT_PLUS;
            else if (*fmt == ' ') flags |= FMT_SPACE;
            else break;
        }
        if (*fmt == '*') {
            width = va_arg(*ap, int);
            if (width < 0)
                flags |= FMT_LEFT, width = -width;
            fmt++;
        }
        while (*fmt >= '0' && *fmt <= '9')
            width = width * 10 + (*fmt++ - '0');
        if (*fmt == '.') {
            fmt++;
            prec = 0;
            if (*fmt == '*') {
                prec = va_arg(*ap, int);
                fmt++;
            }
            while (*fmt >= '0' && *fmt <= '9')
                prec = prec * 10 + (*fmt++ - '0');
        }
        for (;; fmt++) {
            if (*fmt == 'l') lng++;
            else if (*fmt == 'z' || *fmt == 'j' || *fmt == 't') lng = 2;
            else if (*fmt == 'h') ;
            else break;
        }

        char buf[72];
        char *end = buf + sizeof buf;
        char conv = *fmt ? *fmt++ : 0;
        switch (conv) {
        case 'd':
        case 'i': {
            long long v = lng ? va_arg(*ap, long long) : va_arg(*ap, int);
            unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
            size_t n = utoa(end, u, 10, false);
            while ((int)n < prec)
                *(end - ++n) = '0';
            if (v < 0) *(end - ++n) = '-';
            else if (flags & FMT_PLUS) *(end - ++n) = '+';
            else if (flags & FMT_SPACE) *(end - ++n) = ' ';
            fmt_emit_padded(sink, ctx, end - n, n, width, flags);
            break;
        }
        case 'u':
        case 'x':
        case 'X':
        case 'o': {
            unsigned long long u = lng ? va_arg(*ap, unsigned long long) : va_arg(*ap, unsigned);
            unsigned base = conv == 'u' ? 10 : conv == 'o' ? 8 : 16;
            size_t n = utoa(end, u, base, conv == 'X');
            while ((int)n < prec)
                *(end - ++n) = '0';
            fmt_emit_padded(sink, ctx, end - n, n, width, flags & ~FMT_PLUS);
            break;
        }
        case 'p': {
            uintptr_t u = (uintptr_t)va_arg(*ap, void *);
            size_t n = utoa(end, u, 16, false);
            *(end - ++n) = 'x';
            *(end - ++n) = '0';
            fmt_emit_padded(sink, ctx, end - n, n, width, flags & FMT_LEFT);
            break;
        }
        case 's': {
            const char *s = va_arg(*ap, const char *);
            if (!s)
                s = "(null)";
            size_t n = prec >= 0 ? strnlen(s, (size_t)prec) : strlen(s);
            fmt_emit_padded(sink, ctx, s, n, width, flags & FMT_LEFT);
            break;
        }
        case 'c': {
            char c = (char)va_arg(*ap, int);
            fmt_emit_padded(sink, ctx, &c, 1, width, flags & FMT_LEFT);
            break;
        }
        case 'f':
        case 'e':
        case 'g':
            if (ffn) {
                ffn(sink, ctx, conv, width, prec, flags, ap);
            } else {
                // kernel code has no doubles; the argument cannot be skipped safely
                sink(ctx, "%?", 2);
                return cs.count;
            }
            break;
        case '%':
            sink(ctx, "%", 1);
            break;
        default:
            sink(ctx, "%?", 2);
            break;
        }
    }
    return cs.count;
}

struct snbuf { char *buf; size_t size, len; };

static void snprintf_sink(void *c, const char *s, size_t n)
{
    struct snbuf *b = c;
    for (size_t i = 0; i < n; i++, b->len++)
        if (b->len + 1 < b->size)
            b->buf[b->len] = s[i];
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct snbuf b = { buf, size, 0 };
    va_list aq;
    va_copy(aq, ap);
    fmt_format(snprintf_sink, &b, 0, fmt, &aq);
    va_end(aq);
    if (size)
        buf[b.len < size ? b.len : size - 1] = 0;
    return (int)b.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}
