// SPDX-License-Identifier: MIT
// Fuzzes kernel/cmdline.c: cmdline_parse on the input as a C string (the
// kernel's line, whatever a loader or fw_cfg put in it), and
// cmdline_duration on it with each default unit.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/cmdline.h"
#include "tests/fuzz/fuzz.h"

static int warnings;

static void warn(void *ctx, const char *msg)
{
    (void)ctx;
    size_t n = strlen(msg);
    FUZZ_CHECK(n > 0 && n < 256);
    for (size_t i = 0; i < n; i++)       // user text is shown with control bytes as '?'
        FUZZ_CHECK((unsigned char)msg[i] >= 0x20 && msg[i] != 0x7f);
    warnings++;
}

// What cmdline.h promises about *p.
static void check_params(const struct kparams *p, const char *line)
{
    FUZZ_CHECK(fuzz_strnlen(p->app, sizeof p->app) < sizeof p->app);
    FUZZ_CHECK(p->argc >= 0 && p->argc <= CMDLINE_ARGV_MAX);
    FUZZ_CHECK(p->app[0] ? p->argc >= 1 : p->argc == 0);
    for (int i = 0; i < p->argc; i++) {
        const char *a = p->argv[i];
        FUZZ_CHECK(a >= p->buf && a < p->buf + sizeof p->buf);
        FUZZ_CHECK(fuzz_strnlen(a, (size_t)(p->buf + sizeof p->buf - a)) <
                   (size_t)(p->buf + sizeof p->buf - a));
        // Double quotes may put spaces (or nothing) in a word; they are
        // removed (cmdline.h).
        FUZZ_CHECK(!strchr(a, '"'));
        if (i == 0)
            FUZZ_CHECK(!strcmp(a, p->app));
    }
    for (int i = p->argc; i <= CMDLINE_ARGV_MAX; i++)
        FUZZ_CHECK(p->argv[i] == NULL);
    FUZZ_CHECK(p->gomaxprocs >= 0 && p->gomaxprocs <= CMDLINE_GOMAXPROCS_MAX);
    FUZZ_CHECK(p->quantum_ns >= 20000 && p->quantum_ns <= 1000000000);
    FUZZ_CHECK(p->schedtrace_ns == 0 ||
               (p->schedtrace_ns >= 1000000 && p->schedtrace_ns <= 60000000000ull));
    FUZZ_CHECK(p->steal == STEAL_NUMA || p->steal == STEAL_FLAT);
    FUZZ_CHECK(p->idle == IDLE_HLT || p->idle == IDLE_MWAIT || p->idle == IDLE_POLL);
    // An empty line (or one of separators) is the defaults, without a word.
    if (line[strspn(line, " \t\r\n")] == 0)
        FUZZ_CHECK(warnings == 0 && p->app[0] == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct kparams p;
    static const uint64_t units[] = { 0, 1000, 1000000, 1000000000 };
    char *line = malloc(size + 1);
    uint64_t ns;

    FUZZ_CHECK(line);
    memcpy(line, data, size);
    line[size] = 0;
    warnings = 0;
    int n = cmdline_parse(line, &p, warn, NULL);
    FUZZ_CHECK(n == warnings);
    check_params(&p, line);
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
        if (cmdline_duration(line, units[u], &ns) && u == 0)
            FUZZ_CHECK(strpbrk(line, "smu"));   // a bare number has no unit here
    free(line);
    return 0;
}
