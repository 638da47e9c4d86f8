// SPDX-License-Identifier: MIT
// Host tests for kernel/cmdline.c: defaults, every key's good and bad
// values at their boundaries, the app's argv, and one warning per bad word.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "kernel/cmdline.h"

#define MAX_WARNINGS 8

struct warnings {
    int n;
    char msg[MAX_WARNINGS][256];
};

static void collect(void *ctx, const char *msg)
{
    struct warnings *w = ctx;
    if (w->n < MAX_WARNINGS)
        snprintf(w->msg[w->n], sizeof w->msg[0], "%s", msg);
    w->n++;
}

// -Ikernel makes <string.h> the kernel's, which lacks strstr, strcpy and
// strcat: the tests bring their own.
static bool contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncmp(hay, needle, n) == 0)
            return true;
    return n == 0;
}

static void append(char *buf, size_t size, const char *s)
{
    size_t n = strlen(buf);
    snprintf(buf + n, size - n, "%s", s);
}

static struct kparams p;
static struct warnings w;

// Parses line into p, gathering warnings into w; returns the count the
// parser reported, which must match the warn calls.
static int parse(const char *line)
{
    memset(&w, 0, sizeof w);
    int n = cmdline_parse(line, &p, collect, &w);
    if (n != w.n)
        CHECKF(0, "parse(\"%s\") returned %d but warned %d times", line, n, w.n);
    return n;
}

static bool warned(const char *needle)
{
    for (int i = 0; i < w.n && i < MAX_WARNINGS; i++)
        if (contains(w.msg[i], needle))
            return true;
    return false;
}

static void check_defaults(void)
{
    CHECK(p.app[0] == '\0');
    CHECK(p.argc == 0);
    CHECK(p.argv[0] == NULL);
    CHECK(p.gomaxprocs == 0);
    CHECK(p.quantum_ns == 10000000);
    CHECK(p.schedtrace_ns == 0);
    CHECK(!p.scheddetail);
    CHECK(!p.trace);
    CHECK(p.steal == STEAL_NUMA);
    CHECK(p.idle == IDLE_HLT);
    CHECK(p.numa);
    CHECK(!p.seed_given);
    CHECK(p.simd);
    CHECK(!p.boot_timeline);
    CHECK(p.init_delay_ns == INIT_DELAY_AUTO);
    CHECK(p.ap_timeout_ns == 2000000000ull);
}

static void test_defaults(void)
{
    CHECK(parse("") == 0);
    check_defaults();
    CHECK(parse("  \t ") == 0);
    check_defaults();
    memset(&w, 0, sizeof w);
    CHECK(cmdline_parse(NULL, &p, collect, &w) == 0);
    check_defaults();
    // A NULL warn function only loses the text, not the count.
    CHECK(cmdline_parse("bogus", &p, NULL, NULL) == 1);
}

// Every bad word below must give exactly one warning and leave the default.
static void expect_bad(const char *line, const char *needle)
{
    int n = parse(line);
    CHECKF(n == 1, "\"%s\": %d warnings, want 1", line, n);
    CHECKF(warned(needle), "\"%s\": warning \"%s\" lacks \"%s\"", line, w.msg[0], needle);
    check_defaults();
}

static void test_gomaxprocs(void)
{
    CHECK(parse("gomaxprocs=1") == 0 && p.gomaxprocs == 1);
    CHECK(parse("gomaxprocs=1024") == 0 && p.gomaxprocs == 1024);
    CHECK(parse("gomaxprocs=4") == 0 && p.gomaxprocs == 4);
    expect_bad("gomaxprocs=0",
               "cmdline: gomaxprocs=0 is out of range (1..1024); using the default (one per core)");
    expect_bad("gomaxprocs=1025", "gomaxprocs=1025 is out of range (1..1024)");
    expect_bad("gomaxprocs=-1", "gomaxprocs=-1 is not valid (1..1024)");
    expect_bad("gomaxprocs=4x", "gomaxprocs=4x is not valid");
    expect_bad("gomaxprocs=99999999999999999999999", "is not valid (1..1024)");
    expect_bad("gomaxprocs=", "gomaxprocs= has no value (1..1024)");
}

static void test_quantum(void)
{
    CHECK(parse("quantum=20us") == 0 && p.quantum_ns == 20000);
    CHECK(parse("quantum=1s") == 0 && p.quantum_ns == 1000000000);
    CHECK(parse("quantum=1000ms") == 0 && p.quantum_ns == 1000000000);
    CHECK(parse("quantum=250us") == 0 && p.quantum_ns == 250000);
    CHECK(parse("quantum=5ms") == 0 && p.quantum_ns == 5000000);
    expect_bad("quantum=19us", "quantum=19us is out of range (20us..1s");
    expect_bad("quantum=1001ms", "is out of range");
    expect_bad("quantum=2s", "is out of range");
    expect_bad("quantum=0ms", "is out of range");
    expect_bad("quantum=10", "quantum=10 needs a unit (20us..1s, with a unit: us, ms or s)");
    expect_bad("quantum=10ns", "quantum=10ns is not valid");
    expect_bad("quantum=ms", "is not valid");
    expect_bad("quantum=1.5ms", "is not valid");
    expect_bad("quantum=", "quantum= has no value");
    CHECK(warned("using the default (10ms)"));
}

static void test_profile_metrics(void)
{
    CHECK(parse("") == 0 && p.profile_hz == 0 && !p.metrics);
    CHECK(parse("profile=100") == 0 && p.profile_hz == 100);
    CHECK(parse("profile=10000") == 0 && p.profile_hz == 10000);
    CHECK(parse("profile=0") == 0 && p.profile_hz == 0);
    CHECK(parse("profile=99") == 1 && p.profile_hz == 0);
    CHECK(parse("profile=10001") == 1 && p.profile_hz == 0);
    CHECK(parse("profile=fast") == 1 && p.profile_hz == 0);
    CHECK(parse("metrics=1") == 0 && p.metrics);
    CHECK(parse("metrics=2") == 1 && !p.metrics);
}

static void test_schedtrace(void)
{
    CHECK(parse("schedtrace=1000") == 0 && p.schedtrace_ns == 1000000000);
    CHECK(parse("schedtrace=1") == 0 && p.schedtrace_ns == 1000000);
    CHECK(parse("schedtrace=250ms") == 0 && p.schedtrace_ns == 250000000);
    CHECK(parse("schedtrace=2s") == 0 && p.schedtrace_ns == 2000000000);
    CHECK(parse("schedtrace=60s") == 0 && p.schedtrace_ns == 60000000000ull);
    CHECK(parse("schedtrace=60000") == 0 && p.schedtrace_ns == 60000000000ull);
    CHECK(parse("schedtrace=1000 schedtrace=0") == 0 && p.schedtrace_ns == 0);
    expect_bad("schedtrace=60001", "schedtrace=60001 is out of range (0 (off) or 1ms..60s");
    expect_bad("schedtrace=61s", "is out of range");
    expect_bad("schedtrace=500us", "is out of range");
    expect_bad("schedtrace=1m", "is not valid");
    expect_bad("schedtrace=", "has no value");
    expect_bad("schedtrace=18446744073709551615", "is not valid");
}

static void test_flags(void)
{
    CHECK(parse("scheddetail=1 trace=1") == 0 && p.scheddetail && p.trace);
    CHECK(parse("scheddetail=1 scheddetail=0 trace=0") == 0 && !p.scheddetail && !p.trace);
    expect_bad("scheddetail=2", "scheddetail=2 is not valid (0 or 1); using the default (0)");
    expect_bad("trace=on", "trace=on is not valid (0 or 1)");
    expect_bad("trace=", "trace= has no value");
}

static void test_choices(void)
{
    CHECK(parse("steal=flat") == 0 && p.steal == STEAL_FLAT);
    CHECK(parse("steal=numa") == 0 && p.steal == STEAL_NUMA);
    CHECK(parse("idle=mwait") == 0 && p.idle == IDLE_MWAIT);
    CHECK(parse("idle=poll") == 0 && p.idle == IDLE_POLL);
    CHECK(parse("idle=hlt") == 0 && p.idle == IDLE_HLT);
    CHECK(parse("numa=off") == 0 && !p.numa);
    CHECK(parse("numa=0") == 0 && !p.numa);
    CHECK(parse("numa=0 numa=1") == 0 && p.numa);
    CHECK(parse("numa=off numa=on") == 0 && p.numa);
    CHECK(parse("simd=off") == 0 && !p.simd);
    CHECK(parse("simd=on") == 0 && p.simd);
    expect_bad("steal=random", "steal=random is not valid (numa or flat); using the default (numa)");
    expect_bad("idle=halt", "idle=halt is not valid (hlt, mwait or poll)");
    expect_bad("numa=no", "numa=no is not valid (on, off, 1 or 0)");
    expect_bad("simd=0", "simd=0 is not valid (on or off)");
    expect_bad("steal=NUMA", "is not valid");
    expect_bad("idle=", "idle= has no value");
}

static void test_delay(void)
{
    CHECK(parse("delay=exitsyscall_retaken:20000") == 0 && p.ndelays == 1);
    CHECK(strcmp(p.delays[0].name, "exitsyscall_retaken") == 0 && p.delays[0].us == 20000);
    CHECK(parse("delay=a:1,b_2:0,c:1000000") == 0 && p.ndelays == 3);
    CHECK(strcmp(p.delays[1].name, "b_2") == 0 && p.delays[1].us == 0 && p.delays[2].us == 1000000);
    CHECK(parse("delay=a:1,a:1,a:1,a:1,a:1,a:1,a:1,a:1") == 0 && p.ndelays == 8);
    expect_bad("delay=a:1,a:1,a:1,a:1,a:1,a:1,a:1,a:1,a:1", "is out of range");
    expect_bad("delay=a:1000001", "delay=a:1000001 is out of range (NAME:US[,NAME:US...]");
    expect_bad("delay=a", "is not valid");
    expect_bad("delay=a:", "is not valid");
    expect_bad("delay=:5", "is not valid");
    expect_bad("delay=A:5", "is not valid");
    expect_bad("delay=a:5,", "is not valid");
    expect_bad("delay=a:5x", "is not valid");
    expect_bad("delay=", "delay= has no value");
    CHECK(p.ndelays == 0);
}

static void test_boot_keys(void)
{
    CHECK(parse("boot_timeline=1") == 0 && p.boot_timeline);
    CHECK(parse("init_delay=10ms") == 0 && p.init_delay_ns == 10000000);
    CHECK(parse("init_delay=0") == 0 && p.init_delay_ns == 0);
    CHECK(parse("init_delay=200us") == 0 && p.init_delay_ns == 200000);
    CHECK(parse("init_delay=10ms init_delay=auto") == 0 && p.init_delay_ns == INIT_DELAY_AUTO);
    expect_bad("boot_timeline=yes", "boot_timeline=yes is not valid (0 or 1)");
    expect_bad("init_delay=10", "init_delay=10 needs a unit");
    expect_bad("init_delay=101ms", "init_delay=101ms is out of range (auto, 0 or 1us..100ms");
    expect_bad("init_delay=soon", "is not valid");
    CHECK(p.init_delay_ns == INIT_DELAY_AUTO);
    CHECK(parse("ap_timeout=1us") == 0 && p.ap_timeout_ns == 1000);
    CHECK(parse("ap_timeout=10s") == 0 && p.ap_timeout_ns == 10000000000ull);
    expect_bad("ap_timeout=0us", "ap_timeout=0us is out of range");
    expect_bad("ap_timeout=11s", "ap_timeout=11s is out of range (1us..10s");
    expect_bad("ap_timeout=5", "ap_timeout=5 needs a unit");
    CHECK(p.ap_timeout_ns == 2000000000ull);
}

// The keys kernel/main.c reads from the text before the parse: a word
// that starts with the prefix, and only a whole word's start.
// ip=A.B.C.D/N and gw=A.B.C.D: the first NIC's static address.
static void test_ip(void)
{
    CHECK(parse("") == 0 && p.ip_addr == 0 && p.ip_gw == 0);
    CHECK(parse("ip=10.0.2.15/24 gw=10.0.2.2") == 0 && p.ip_addr == 0x0a00020f && p.ip_prefix == 24 &&
          p.ip_gw == 0x0a000202);
    CHECK(parse("ip=198.18.0.2/15") == 0 && p.ip_addr == 0xc6120002 && p.ip_prefix == 15);
    CHECK(parse("ip=255.255.255.255/32") == 0 && p.ip_addr == 0xffffffff && p.ip_prefix == 32);
    expect_bad("ip=10.0.2.15", "ip=10.0.2.15 is not valid (A.B.C.D/N, N 1..32)");
    expect_bad("ip=10.0.2/24", "ip=10.0.2/24 is not valid (A.B.C.D/N, N 1..32)");
    expect_bad("ip=10.0.2.256/24", "ip=10.0.2.256/24 is not valid (A.B.C.D/N, N 1..32)");
    expect_bad("ip=10.0.2.15/33", "ip=10.0.2.15/33 is out of range (A.B.C.D/N, N 1..32)");
    expect_bad("ip=10.0.2.15/0", "ip=10.0.2.15/0 is out of range (A.B.C.D/N, N 1..32)");
    expect_bad("ip=0.0.0.0/8", "ip=0.0.0.0/8 is out of range (A.B.C.D/N, N 1..32)");
    expect_bad("ip=1..2.3/8", "ip=1..2.3/8 is not valid (A.B.C.D/N, N 1..32)");
    expect_bad("gw=10.0.2.2.", "gw=10.0.2.2. is not valid (A.B.C.D)");
    expect_bad("gw=10.0.2", "gw=10.0.2 is not valid (A.B.C.D)");
}

static void test_has_word(void)
{
    CHECK(cmdline_has_word("init_delay=10ms", "init_delay="));
    CHECK(cmdline_has_word("app=hello  inject=ap-silent", "inject="));
    CHECK(cmdline_has_word("app=hello\tsimd=off", "simd=off"));
    CHECK(cmdline_has_word("app=hello simd=offx", "simd=off"));     // a prefix: the cautious answer
    CHECK(!cmdline_has_word("app=hello xinit_delay=1ms", "init_delay="));
    CHECK(!cmdline_has_word("app=hello simd=on", "simd=off"));
    CHECK(!cmdline_has_word("", "inject="));
    CHECK(!cmdline_has_word("inject", "inject="));
    CHECK(cmdline_has_word("  inject=x", "inject="));                 // leading blanks
    CHECK(cmdline_has_word("iinject= inject=", "inject="));          // the first letter again, then a word that is
    CHECK(!cmdline_has_word("iinject=", "inject="));
    CHECK(!cmdline_has_word("app=x\rinjec", "inject="));             // the line ends inside the prefix
}

static void test_word_number(void)
{
    uint64_t n = 0;
    CHECK(cmdline_word_number("inject=tickets:2", "inject=tickets:", &n) && n == 2);
    CHECK(cmdline_word_number("app=hello inject=tickets:17\tx", "inject=tickets:", &n) && n == 17);
    CHECK(!cmdline_word_number("inject=tickets:", "inject=tickets:", &n));      // no digits
    CHECK(!cmdline_word_number("inject=tickets:2x", "inject=tickets:", &n));    // not a number to the word's end
    CHECK(!cmdline_word_number("xinject=tickets:2", "inject=tickets:", &n));
    CHECK(!cmdline_word_number("app=hello", "inject=tickets:", &n));
    CHECK(!cmdline_word_number("inject=tickets:99999999999999999999999", "inject=tickets:", &n));   // overflow
}

static void test_seed(void)
{
    CHECK(parse("seed=0") == 0 && p.seed_given && p.seed == 0);
    CHECK(parse("seed=42") == 0 && p.seed_given && p.seed == 42);
    CHECK(parse("seed=18446744073709551615") == 0 && p.seed == UINT64_MAX);
    CHECK(parse("seed=0x10") == 0 && p.seed == 16);
    CHECK(parse("seed=0XdeadBEEF") == 0 && p.seed == 0xdeadbeef);
    CHECK(parse("seed=0xffffffffffffffff") == 0 && p.seed == UINT64_MAX);
    expect_bad("seed=18446744073709551616", "is not valid (a decimal or 0x-hex 64-bit number)");
    expect_bad("seed=0x1ffffffffffffffff", "is not valid");
    expect_bad("seed=0x", "is not valid");
    expect_bad("seed=0xg", "is not valid");
    expect_bad("seed=12ab", "is not valid");
    expect_bad("seed=", "seed= has no value");
    CHECK(!p.seed_given);
}

static void test_inject(void)
{
    CHECK(parse("") == 0 && p.inject == INJECT_NONE);
    CHECK(parse("inject=ap-silent") == 0 && p.inject == INJECT_AP_SILENT && p.inject_arg == 1);
    CHECK(parse("inject=ap-silent:3") == 0 && p.inject == INJECT_AP_SILENT && p.inject_arg == 3);
    CHECK(parse("inject=acpi:MADT") == 0 && p.inject == INJECT_ACPI && strcmp(p.inject_sig, "APIC") == 0);
    CHECK(parse("inject=acpi:FADT") == 0 && strcmp(p.inject_sig, "FACP") == 0);
    CHECK(parse("inject=acpi:SRAT") == 0 && strcmp(p.inject_sig, "SRAT") == 0);
    CHECK(parse("inject=acpi:RSDP") == 0 && strcmp(p.inject_sig, "RSDP") == 0);
    CHECK(parse("inject=node-full") == 0 && p.inject == INJECT_NODE_FULL && p.inject_arg == 0);
    CHECK(parse("inject=node-full:1") == 0 && p.inject_arg == 1);
    CHECK(parse("inject=stack-full app=hello") == 0 && p.inject == INJECT_STACK_FULL);
    CHECK(parse("inject=tickets:2") == 0 && p.inject == INJECT_TICKETS && p.inject_arg == 2);
    CHECK(parse("inject=evict:4") == 0 && p.inject == INJECT_EVICT && p.inject_arg == 4);
    expect_bad("inject=ap", "inject=ap is not valid (ap-silent[:APICID], acpi:SIG, node-full[:NODE], stack-full, "
                            "tickets:N or evict:S)");
    expect_bad("inject=evict:1", "is not valid");
    expect_bad("inject=tickets", "is not valid");
    expect_bad("inject=tickets:0", "is not valid");
    expect_bad("inject=tickets:2x", "is not valid");
    expect_bad("inject=acpi", "is not valid");
    expect_bad("inject=acpi:APICS", "is not valid");
    expect_bad("inject=ap-silent:x", "is not valid");
    expect_bad("inject=stack-full:2", "is not valid");
    expect_bad("inject=node-full:99999999999", "is not valid");
    CHECK(p.inject == INJECT_NONE);
}

static void test_duration(void)
{
    uint64_t ns = 7;
    CHECK(cmdline_duration("250us", 0, &ns) && ns == 250000);
    CHECK(cmdline_duration("10ms", 0, &ns) && ns == 10000000);
    CHECK(cmdline_duration("1s", 0, &ns) && ns == 1000000000);
    CHECK(cmdline_duration("0", 1000000, &ns) && ns == 0);
    CHECK(cmdline_duration("7", 1000000, &ns) && ns == 7000000);
    CHECK(cmdline_duration("18446744073709551615", 1, &ns) && ns == UINT64_MAX);
    ns = 7;
    CHECK(!cmdline_duration("10", 0, &ns) && ns == 7);     // no unit, none allowed
    CHECK(!cmdline_duration("", 1, &ns));
    CHECK(!cmdline_duration("us", 1, &ns));
    CHECK(!cmdline_duration("-1ms", 1, &ns));
    CHECK(!cmdline_duration("1 ms", 1, &ns));
    CHECK(!cmdline_duration("1msx", 1, &ns));
    CHECK(!cmdline_duration("1h", 1, &ns));
    CHECK(!cmdline_duration("18446744073709551616", 1, &ns));
    CHECK(!cmdline_duration("18446744073709552s", 1, &ns));   // overflows in ns
    CHECK(ns == 7);
}

static void test_app_argv(void)
{
    CHECK(parse("app=fib 30 gomaxprocs=2 filter=x") == 0);
    CHECK(strcmp(p.app, "fib") == 0);
    CHECK(p.gomaxprocs == 2);
    CHECK(p.argc == 3);
    CHECK(strcmp(p.argv[0], "fib") == 0);
    CHECK(strcmp(p.argv[1], "30") == 0);
    CHECK(strcmp(p.argv[2], "filter=x") == 0);
    CHECK(p.argv[3] == NULL);
    for (int i = 0; i < p.argc; i++)
        CHECK(p.argv[i] >= p.buf && p.argv[i] < p.buf + sizeof p.buf);

    CHECK(parse("quantum=1ms\tapp=hello") == 0);
    CHECK(strcmp(p.app, "hello") == 0 && p.argc == 1 && p.argv[1] == NULL);
    CHECK(p.quantum_ns == 1000000);

    // After app=, an unknown key or a bare word is the app's, with its '='.
    CHECK(parse("app=x -v a=b =c gomaxproc=3 trace=1") == 0);
    CHECK(p.argc == 5 && p.trace);
    CHECK(strcmp(p.argv[2], "a=b") == 0 && strcmp(p.argv[3], "=c") == 0);
    CHECK(strcmp(p.argv[4], "gomaxproc=3") == 0);

    // A second app= replaces the name and keeps the arguments so far.
    CHECK(parse("app=a 1 app=b 2") == 0);
    CHECK(strcmp(p.app, "b") == 0 && strcmp(p.argv[0], "b") == 0);
    CHECK(p.argc == 3 && strcmp(p.argv[1], "1") == 0 && strcmp(p.argv[2], "2") == 0);

    // A kernel key's bad value after app= is still the kernel's warning.
    CHECK(parse("app=x gomaxprocs=0 y") == 1 && warned("gomaxprocs=0 is out of range"));
    CHECK(p.argc == 2 && strcmp(p.argv[1], "y") == 0 && p.gomaxprocs == 0);
}

static void test_app_name(void)
{
    CHECK(parse("app=abcdefghijklmnopqrstuvwxyz01234") == 0);   // 31 characters
    CHECK(strlen(p.app) == 31 && p.argc == 1);
    // Its arguments are not kernel words even though the name was rejected.
    CHECK(parse("app=abcdefghijklmnopqrstuvwxyz012345 30 x=y") == 1);
    CHECK(warned("app=abcdefghijklmnopqrstuvwxyz012345 is not valid (a name of 1..31 characters); "
                 "using the default (no app)"));
    CHECK(p.app[0] == '\0' && p.argc == 0 && p.argv[0] == NULL);
    CHECK(parse("app= 30") == 1 && warned("app= has no value"));
    CHECK(p.app[0] == '\0' && p.argc == 0);
    // A rejected second app= keeps the first.
    CHECK(parse("app=ok app=") == 1 && warned("keeping the earlier value"));
    CHECK(strcmp(p.app, "ok") == 0 && p.argc == 1);
}

static void test_before_app(void)
{
    CHECK(parse("gomaxproc=2 app=x") == 1);
    CHECK(warned("cmdline: unknown key \"gomaxproc\" in \"gomaxproc=2\"; ignored"));
    CHECK(p.argc == 1 && p.gomaxprocs == 0);
    CHECK(parse("30 app=x") == 1);
    CHECK(warned("\"30\" is not a key=value word"));
    CHECK(p.argc == 1);
    CHECK(parse("=5") == 1 && warned("unknown key \"\" in \"=5\""));
    check_defaults();
}

static void test_too_many_args(void)
{
    char line[512] = "app=many";
    for (int i = 1; i <= 40; i++)
        snprintf(line + strlen(line), sizeof line - strlen(line), " a%d", i);
    append(line, sizeof line, " trace=1");
    CHECK(parse(line) == 1);
    CHECK(warned("takes at most 31 arguments; dropped \"a32\" and those after it"));
    CHECK(p.argc == CMDLINE_ARGV_MAX);
    CHECK(strcmp(p.argv[CMDLINE_ARGV_MAX - 1], "a31") == 0);
    CHECK(p.argv[CMDLINE_ARGV_MAX] == NULL);
    CHECK(p.trace);     // kernel keys after the overflow still count

    // Exactly 31 arguments fit without a warning.
    snprintf(line, sizeof line, "app=many");
    for (int i = 1; i <= 31; i++)
        snprintf(line + strlen(line), sizeof line - strlen(line), " a%d", i);
    CHECK(parse(line) == 0 && p.argc == 32 && p.argv[32] == NULL);
}

static void test_long_line(void)
{
    char line[3000];
    // 1030 bytes of one app argument: the cut falls inside it, so it goes.
    snprintf(line, sizeof line, "app=x ");
    size_t n = strlen(line);
    memset(line + n, 'y', 1030);
    snprintf(line + n + 1030, sizeof line - n - 1030, " trace=1");
    CHECK(parse(line) == 1 && warned("longer than 1023 characters; ignored from \"yyy"));
    CHECK(p.argc == 1 && !p.trace);

    // Many short words: those that fit whole are kept, the cut one is not.
    line[0] = '\0';
    for (int i = 0; i < 300; i++)
        append(line, sizeof line, "gomaxprocs=12 ");
    CHECK(parse(line) == 1 && p.gomaxprocs == 12);
    CHECK(warned("ignored from \"gomaxprocs=12\" on"));

    // Exactly 1023 bytes fit; trailing blanks past the end do not warn.
    memset(line, ' ', sizeof line);
    memcpy(line, "trace=1", 7);
    line[1023] = '\0';
    CHECK(parse(line) == 0 && p.trace);
    line[1023] = ' ';
    line[2000] = '\0';
    CHECK(parse(line) == 0 && p.trace);
    memcpy(line + 1016, "trace=0", 7);  // ends at byte 1023: fits exactly
    CHECK(parse(line) == 0 && !p.trace);
    memcpy(line + 1016, " trace=1", 8);  // ends at byte 1024: cut
    CHECK(parse(line) == 1 && p.trace && warned("ignored from \"trace=1\" on"));
}

static void test_one_warning_per_word(void)
{
    CHECK(parse("gomaxprocs=0 quantum=10 bogus=1 word steal=x idle= app=ok "
                "seed=zz numa=maybe a=b") == 8);
    CHECK(strcmp(p.app, "ok") == 0 && p.argc == 2);
    CHECK(p.gomaxprocs == 0 && p.quantum_ns == 10000000 && p.numa && !p.seed_given);
}

static void test_duplicates(void)
{
    CHECK(parse("gomaxprocs=2 gomaxprocs=8") == 0 && p.gomaxprocs == 8);
    // A bad later value keeps the earlier good one, and says so.
    CHECK(parse("gomaxprocs=2 gomaxprocs=0") == 1 && p.gomaxprocs == 2);
    CHECK(warned("gomaxprocs=0 is out of range (1..1024); keeping the earlier value"));
}

static void test_long_words_in_warnings(void)
{
    char line[600] = "gomaxprocs=";
    memset(line + strlen(line), '9', 500);
    CHECK(parse(line) == 1 && warned("...") && strlen(w.msg[0]) < 200);
    memset(line, 'k', 500);
    snprintf(line + 500, sizeof line - 500, "=1");
    CHECK(parse(line) == 1 && warned("unknown key") && warned("...\"; ignored"));
    CHECK(parse("trace=\x01\x7f") == 1 && warned("trace=?? is not valid"));
}

static void test_separators(void)
{
    CHECK(parse("\t gomaxprocs=3\t\ttrace=1  \r\n") == 0);
    CHECK(p.gomaxprocs == 3 && p.trace);
}

// Double quotes join words and vanish; script= keeps any text.
static void test_quotes_and_script(void)
{
    CHECK(parse("gomaxprocs=2 script=\"run hello; ps;  halt\" app=x \"a b\" c\"d e\"f") == 0);
    CHECK(p.script && strcmp(p.script, "run hello; ps;  halt") == 0);
    CHECK(p.gomaxprocs == 2 && strcmp(p.app, "x") == 0);
    CHECK(p.argc == 3 && strcmp(p.argv[1], "a b") == 0 && strcmp(p.argv[2], "cd ef") == 0);
    CHECK(parse("script=ps") == 0 && strcmp(p.script, "ps") == 0 && p.app[0] == 0);
    CHECK(parse("app=x \"\"") == 0 && p.argc == 2 && p.argv[1][0] == 0);
    // An open quote runs to the end of the line.
    CHECK(parse("script=\"run a  b") == 0 && strcmp(p.script, "run a  b") == 0);
    CHECK(parse("app=x") == 0 && p.script == NULL);
}

int main(void)
{
    RUN(test_defaults);
    RUN(test_gomaxprocs);
    RUN(test_quantum);
    RUN(test_schedtrace);
    RUN(test_profile_metrics);
    RUN(test_flags);
    RUN(test_choices);
    RUN(test_boot_keys);
    RUN(test_ip);
    RUN(test_has_word);
    RUN(test_word_number);
    RUN(test_seed);
    RUN(test_delay);
    RUN(test_inject);
    RUN(test_duration);
    RUN(test_app_argv);
    RUN(test_app_name);
    RUN(test_before_app);
    RUN(test_too_many_args);
    RUN(test_long_line);
    RUN(test_one_warning_per_word);
    RUN(test_duplicates);
    RUN(test_long_words_in_warnings);
    RUN(test_separators);
    RUN(test_quotes_and_script);
    return CHECK_DONE();
}
