// SPDX-License-Identifier: MIT
// %f, %e and %g for the applications' printf (kernel/console.c), which
// passes fmt_double to the formatter. Compiled with vector registers
// (doubles travel in them), so it must only ever run on a goroutine's or
// g0's stack, never in an interrupt handler.
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include "lib/printf.h"
#include "lib/string.h"

// Formats v with prec digits after the point into buf (backwards-safe,
// at most ~40 chars for |v| < 1e19; larger magnitudes use %e form).
static size_t fmt_fixed(char *buf, double v, int prec)
{
    size_t n = 0;
    if (v < 0) {
        buf[n++] = '-';
        v = -v;
    }
    double scale = 1;
    for (int i = 0; i < prec; i++)
        scale *= 10;
    double r = v * scale + 0.5;
    uint64_t ip = (uint64_t)v;
    uint64_t frac = (uint64_t)(r - (double)ip * scale);
    if (frac >= (uint64_t)scale) {
        ip++;
        frac -= (uint64_t)scale;
    }
    char tmp[24];
    int k = 0;
    do {
        tmp[k++] = (char)('0' + ip % 10);
        ip /= 10;
    } while (ip);
    while (k)
        buf[n++] = tmp[--k];
    if (prec > 0) {
        buf[n++] = '.';
        for (int i = prec - 1; i >= 0; i--) {
            buf[n + (size_t)i] = (char)('0' + frac % 10);
            frac /= 10;
        }
        n += (size_t)prec;
    }
    return n;
}

static size_t fmt_exp(char *buf, double v, int prec)
{
    int e = 0;
    bool neg = v < 0;
    if (neg)
        v = -v;
    if (v != 0) {
        while (v >= 10) { v /= 10; e++; }
        while (v < 1) { v *= 10; e--; }
    }
    size_t n = fmt_fixed(buf, neg ? -v : v, prec);
    buf[n++] = 'e';
    buf[n++] = e < 0 ? '-' : '+';
    if (e < 0)
        e = -e;
    if (e >= 100)
        buf[n++] = (char)('0' + e / 100);
    buf[n++] = (char)('0' + (e / 10) % 10);
    buf[n++] = (char)('0' + e % 10);
    return n;
}

static bool memchr_dot(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '.')
            return true;
    return false;
}

void fmt_double(fmt_sink_fn sink, void *ctx, char conv, int width, int prec, int flags,
                          va_list *ap)
{
    double v = va_arg(*ap, double);
    char buf[64];
    size_t n = 0;
    if (prec < 0)
        prec = 6;
    if (prec > 17)
        prec = 17;
    if (v != v) {
        memcpy(buf, "nan", 3), n = 3;   // NOLINT(bugprone-not-null-terminated-result): buf is counted by n, never a C string
    } else if (__builtin_isinf(v)) {
        n = v < 0 ? 4 : 3;
        memcpy(buf, v < 0 ? "-inf" : "inf", n);
    } else {
        double a = v < 0 ? -v : v;
        bool exp = conv == 'e' || a >= 1e18 || (conv == 'g' && a != 0 && (a < 1e-4 || a >= 1e15));
        n = exp ? fmt_exp(buf, v, prec) : fmt_fixed(buf, v, prec);
        if (conv == 'g' && !exp && memchr_dot(buf, n)) {
            while (n && buf[n - 1] == '0')
                n--;
            if (n && buf[n - 1] == '.')
                n--;
        }
    }
    if (n && buf[0] != '-' && (flags & (FMT_PLUS | FMT_SPACE))) {
        memmove(buf + 1, buf, n++);
        buf[0] = (flags & FMT_PLUS) ? '+' : ' ';
    }
    fmt_emit_padded(sink, ctx, buf, n, width, flags);
}
