// SPDX-License-Identifier: MIT
#include "kernel/ktest.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "arch/arch.h"

extern const struct ktest __ktest_start[], __ktest_end[];
int ktest_host_cpus;

bool ktest_cores_are_real(void)
{
    return ktest_host_cpus == 0 || num_cpu() <= ktest_host_cpus;
}

// The running test's outcome. Tests run one at a time from the main
// goroutine; a test's helper goroutines report through KT_* too, so the
// fields are written atomically and the first failure wins.
static char fail_msg[200];
static int failed;
static const char *skip_reason;

void ktest_fail(const char *file, int line, const char *fmt, ...)
{
    // acq_rel: the first failure wins and writes fail_msg; the runner reads
    // it after the test returned and ktest_failed's acquire.
    if (__atomic_exchange_n(&failed, 1, __ATOMIC_ACQ_REL))
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(fail_msg, sizeof fail_msg, fmt, ap);
    va_end(ap);
    if (n < (int)sizeof fail_msg)
        snprintf(fail_msg + n, sizeof fail_msg - (size_t)n, " (%s:%d)", file, line);
}

void ktest_skip(const char *reason)
{
    skip_reason = reason;
}

bool ktest_failed(void)
{
    return __atomic_load_n(&failed, __ATOMIC_ACQUIRE);     // acquire: pairs with ktest_fail's exchange
}

bool kt_wait_count(const uint64_t *counter, uint64_t target, uint64_t timeout_ms)
{
    uint64_t end = nanotime() + timeout_ms * 1000000;
    while (kt_load(counter) < target) {
        if (nanotime() > end)
            return false;
        gosched();
    }
    return true;
}

int ktest_run_all(const char *filter)
{
    int pass = 0, fail = 0, skip = 0;
    // cppcheck-suppress comparePointers ; the linker script's bounds of one section
    for (const struct ktest *t = __ktest_start; t < __ktest_end; t++) {
        if (filter && !strstr(t->name, filter))
            continue;
        failed = 0;
        skip_reason = 0;
        fail_msg[0] = 0;
        uint64_t t0 = arch_cycles();
        t->fn();
        uint64_t ms = arch_cycles_to_ns(arch_cycles() - t0) / 1000000;
        if (ktest_failed()) {
            kprintf("TEST FAIL %s: %s\n", t->name, fail_msg);
            fail++;
        } else if (skip_reason) {
            kprintf("TEST SKIP %s: %s\n", t->name, skip_reason);
            skip++;
        } else {
            kprintf("TEST PASS %s (%lu ms)\n", t->name, ms);
            pass++;
        }
    }
    if (skip)
        kprintf("ktest: %d passed, %d failed, %d skipped\n", pass, fail, skip);
    else
        kprintf("ktest: %d passed, %d failed\n", pass, fail);
    return fail ? 1 : 0;
}
