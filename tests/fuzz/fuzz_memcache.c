// SPDX-License-Identifier: MIT
// Fuzzes kvd's protocol and table (apps/kvd: mc_parse.c, mc_exec.c, mc_meta.c,
// kv_table.c) as a connection drives them: the input is what a client
// sends, served by mc_serve in pieces, on a small table (16 KiB over 2
// shards, so that stores evict) whose clock the first byte moves.
//
// Promises checked: mc_serve consumes no more than it is given and always
// makes progress or asks for more than it has; what it asks for stays
// within the protocol's limits; the answer is whole lines (every one ends
// in CRLF, a VALUE or VA line is followed by exactly its data and CRLF); the
// table never holds more than its memory.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "apps/kvd/kv_table.h"
#include "apps/kvd/mc_exec.h"
#include "apps/kvd/mc_parse.h"
#include "tests/fuzz/fuzz.h"

int kv_host_nodes = 2;

#define MEM (16u << 10)

// The decimal at *p (before end), *p moved past it and one space.
static unsigned long number(const char **p, const char *end)
{
    unsigned long v = 0;
    FUZZ_CHECK(*p < end && **p >= '0' && **p <= '9');
    while (*p < end && **p >= '0' && **p <= '9')
        v = v * 10 + (unsigned long)(*(*p)++ - '0');
    if (*p < end && **p == ' ')
        (*p)++;
    return v;
}

// Every answer is a sequence of lines; VALUE lines carry their data.
static void check_answer(const char *o, size_t n)
{
    size_t i = 0;
    while (i < n) {
        const char *lf = memchr(o + i, '\n', n - i);
        FUZZ_CHECK(lf && lf > o + i && lf[-1] == '\r');
        size_t ll = (size_t)(lf - (o + i)) + 1;
        if (ll > 6 && !memcmp(o + i, "VALUE ", 6)) {
            const char *sp = memchr(o + i + 6, ' ', ll - 6), *end = o + i + ll - 2;
            FUZZ_CHECK(sp);
            sp++;
            number(&sp, end);                       // flags
            unsigned long bytes = number(&sp, end);
            FUZZ_CHECK(i + ll + bytes + 2 <= n);
            FUZZ_CHECK(o[i + ll + bytes] == '\r' && o[i + ll + bytes + 1] == '\n');
            i += bytes + 2;
        } else if (ll > 3 && !memcmp(o + i, "VA ", 3)) {     // a meta answer's value
            const char *sp = o + i + 3, *end = o + i + ll - 2;
            unsigned long bytes = number(&sp, end);
            FUZZ_CHECK(i + ll + bytes + 2 <= n);
            FUZZ_CHECK(o[i + ll + bytes] == '\r' && o[i + ll + bytes + 1] == '\n');
            i += bytes + 2;
        }
        i += ll;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct kv_table *t = kv_create(MEM, 2);
    FUZZ_CHECK(t);
    struct mc_env env = { .table = t, .prefixes = mc_prefixes_create(), .now = 2, .started_unix = 1700000000,
                          .version = "fuzz" };
    struct mc_out out = { 0 };
    struct mc_conn c = { 0 };
    size_t step = 1 + (data[0] & 0x1f) * 3;
    const char *in = (const char *)data + 1;
    size_t len = size - 1, fed = 0, have = 0;
    char *buf = malloc(len + 1);
    while (!c.closing) {
        size_t n = len - fed < step ? len - fed : step;
        memcpy(buf + have, in + fed, n);
        have += n, fed += n;
        size_t before = out.len;
        size_t used = mc_serve(&c, buf, have, &env, &out);
        FUZZ_CHECK(used <= have);
        if (!c.closing && used < have)
            FUZZ_CHECK(c.need > have - used && c.need <= MC_GET_LINE_MAX + MC_ITEM_MAX + 64);
        if (out.len > before)
            check_answer(out.buf + before, out.len - before);
        memmove(buf, buf + used, have - used);
        have -= used;
        env.now += (data[0] >> 5) & 1;
        if (fed == len)
            break;
    }
    struct kv_stats s;
    kv_stats(t, &s);
    FUZZ_CHECK(s.bytes <= MEM && s.curr_items <= MEM / sizeof(struct kv_item));
    free(buf);
    free(out.buf);
    kv_destroy(t);
    mc_prefixes_destroy(env.prefixes);
    return 0;
}
