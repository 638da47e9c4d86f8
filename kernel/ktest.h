// SPDX-License-Identifier: MIT
// In-kernel tests: KTEST(name) { ... } registers a test in .ktest; app=ktest
// runs them (filter=SUBSTR picks some) and prints one line each:
//   TEST PASS name | TEST FAIL name: message | TEST SKIP name: reason
// then "ktest: N passed, N failed". A test fails through KT_ASSERT /
// KT_FAIL, which record the first failure and return from the test.
#ifndef GORO_KTEST_H
#define GORO_KTEST_H

#include <stdbool.h>
#include "goro.h"

struct ktest {
    const char *name;
    void (*fn)(void);
    const char *file;
};

#define KTEST(name_)                                                              \
    static void ktest_fn_##name_(void);                                           \
    static const struct ktest ktest_##name_                                       \
        __attribute__((used, section(".ktest"), aligned(8))) = {                  \
            #name_, ktest_fn_##name_, __FILE__                                    \
        };                                                                        \
    static void ktest_fn_##name_(void)

void ktest_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void ktest_skip(const char *reason);
bool ktest_failed(void);

#define KT_FAIL(...) do { ktest_fail(__FILE__, __LINE__, __VA_ARGS__); return; } while (0)
#define KT_ASSERT(c) do { if (!(c)) KT_FAIL("%s", #c); } while (0)
#define KT_ASSERT_EQ(a, b)                                                        \
    do {                                                                          \
        long long a_ = (long long)(a), b_ = (long long)(b);                       \
        if (a_ != b_) KT_FAIL("%s == %s: %lld != %lld", #a, #b, a_, b_);          \
    } while (0)
#define KT_SKIP(reason) do { ktest_skip(reason); return; } while (0)

// filter: substrings separated by commas; a test whose name holds any of
// them runs (NULL: every test).
int ktest_run_all(const char *filter);

// What the tests share: counters touched from many goroutines. Stores are
// release and loads acquire, so a test that sees a count also sees what
// the goroutines wrote before counting; adds are both.
static inline uint64_t kt_load(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }  // acquire: pairs with kt_store, kt_add
static inline void kt_store(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }  // release: pairs with kt_load
static inline void kt_add(uint64_t *p, uint64_t v) { __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL); }  // acq_rel: both

// Raises *p to v if v is larger (a maximum kept across goroutines).
static inline void kt_raise(uint64_t *p, uint64_t v)
{
    uint64_t seen = kt_load(p);
    while (v > seen && !__atomic_compare_exchange_n(p, &seen, v, false, __ATOMIC_ACQ_REL,   // acq_rel: as kt_add;
                                                    __ATOMIC_ACQUIRE))                     // a failure reloads seen
        ;
}

// A round of a set-up that needs every P (or all but a few) running one G
// with nothing else waiting. Its stall limit counts from the round's last
// step (a loop's start, a new low of idle Ps, the send), not from a loop's
// own start: at 512 vCPUs on a 2-CPU host the loops took up to 101 s to
// start, and a limit from each one's start ended the first before the last
// began. What the last look found in the way is kept for a round that never
// settles.
struct kt_busy_round {
    // Any goroutine of the round (kt_store, kt_load; the CAS in ktest.c):
    uint64_t moved;             // cputicks of the round's last step
    uint32_t fewest_idle;       // the round's fewest idle Ps seen
    // The looking goroutine writes, the test reads (kt_store, kt_load):
    // when its last look found something in the way, and what: idle Ps,
    // Gs in the global queue, Ps with Gs queued, other work.
    uint64_t seen_at, seen_idle, seen_global, seen_queued, seen_other;
    uint64_t asked;             // cputicks of the last kt_busy_round_stalled (an exchange)
    uint32_t reported;          // the stall's report: BUSY_ROUND_* (a CAS)
    uint32_t host_stalls;       // stalls the host's held cores excused (the reporter's)
};
void kt_busy_round_begin(struct kt_busy_round *r);      // before the round's goroutines start
void kt_busy_round_moved(struct kt_busy_round *r);
// Past the stall limit since the round's last step; a new low of idle Ps
// seen here is a step, and so is a return after none asked for over
// KT_HOST_HELD_MS under a hypervisor (every asker was off its core: its
// looks, which the round waits on, did not happen). Any goroutine of the
// round may ask; the first that finds it stalled prints
// kt_print_wake_chain, and one the host held starts the limit again
// (KT_HOST_STALLS), the others waiting meanwhile.
bool kt_busy_round_stalled(struct kt_busy_round *r);
// Prints what the wake-up of idle Ps waits on: idle Ps and Ms, spinning
// Ms, Ms handed a P they have not taken (the oldest hand-over's age),
// sched.lock's holder, and where a few of those cores are (each asked by
// NMI). Returns whether the host held one of those cores (below).
bool kt_print_wake_chain(void);
// Asks each of n (at most 8) cores by NMI where it is, prints the
// answers, and returns whether the host held one (below).
bool kt_ask_cores(const uint32_t *cores, uint32_t n, const char *why);
// A set-up's stall: prints kt_print_wake_chain and says whether the
// limit starts again (the host held a core, fewer than KT_HOST_STALLS
// times so far in this wait, counted in *host_stalls).
bool kt_stall_excused(uint32_t *host_stalls);
// The goroutines that want a core (running, runnable or in a call), by
// start function: the first KT_CENSUS_FNS functions met, the rest in
// other. A racy walk, for reports: the kt_print_wake_chain line.
enum { KT_CENSUS_FNS = 6 };
struct kt_census {
    void (*fn[KT_CENSUS_FNS])(void *);
    uint32_t n[KT_CENSUS_FNS], other, running, runnable, in_call;
};
void kt_census(struct kt_census *c);
struct g;
// kt_wait_count for a counter that goroutine gp moves (NULL: not yet
// started): at each stall, asks gp's core if it is on one (else prints the
// wake-up chain), and a core the host held starts the limit again
// (KT_HOST_STALLS).
bool kt_wait_count_of(const uint64_t *counter, uint64_t target, struct g *gp, const char *what);
// Seconds from the last look that found something in the way to now.
uint64_t kt_busy_round_seen_s(const struct kt_busy_round *r);
// One look: true if no P is idle and no G or other work (the caller's
// own, as other_work) waits.
bool kt_busy_round_look(struct kt_busy_round *r, bool other_work);

// How many rounds of such a set-up a test runs: rounds, but one where its
// bound is only measured and Ps are more than 64. Each round gets every P
// busy anew (9 minutes at 1024 vCPUs on 2 host CPUs), and further rounds
// only look for a longer wait that nothing asserts there.
int kt_every_p_busy_rounds(int rounds);

// ---- time: what a test may assert about it ---------------------------------
//
// ktest runs under QEMU almost always, and there the host deschedules
// whole vCPUs, timer interrupts included, for as long as it likes (on a
// loaded 2-core host: hundreds of ms). So a test asserts properties that
// hold however long that is: counts, orders, every G ran exactly once, a
// timer never fires early. Wall-clock numbers are of two kinds only:
//
//  - A tail bound (a p99, a longest wait): KT_TAIL_BOUND prints it always
//    and asserts it only on bare metal, where no host takes the core away.
//    The kernel knows which it is: arch_under_hypervisor() (CPUID's
//    hypervisor bit, set by every hypervisor, KVM and TCG included).
//  - A stall limit: how long a test waits for something that is not
//    happening before it names it as lost. Only a hang reaches it:
//    KT_STALL_MS is far above any descheduling, and kt_wait_count counts
//    it from the counter's last move, so a slow host that keeps making
//    progress never reaches it.
//
// A set-up that needs every core to take a step (all Ps busy) can still
// wait on one vCPU the host does not run: at 1024 vCPUs on 2 host CPUs
// one ran nothing for 62 s. Its stall report asks the cores it waits on
// by NMI, which a core the host runs takes at once, halted or not (a lost
// wake-up leaves its core halted). One answering after KT_HOST_HELD_MS,
// or not at all, under a hypervisor, was held by the host: the set-up's
// limit starts again, at most KT_HOST_STALLS times in one wait.

#define KT_STALL_MS 60000ull
#define KT_STALL_NS (KT_STALL_MS * 1000000ull)
#define KT_HOST_HELD_MS 5000ull
#define KT_HOST_STALLS 4u

// Yields until *counter >= target; false once it has not moved for
// stall_ms (KT_STALL_MS unless a test has its reason).
bool kt_wait_count(const uint64_t *counter, uint64_t target, uint64_t stall_ms);

// True on bare metal: tail bounds on wall-clock time may be asserted.
bool ktest_tail_bounds_asserted(void);

// What a "never early" check allows when it compares TSC readings that may
// come from different cores: 0 on bare metal, where the TSCs agree; 200 us
// under a hypervisor. Under KVM a vCPU moving between host cores can see
// the host's cross-core skew, which goro cannot measure from inside;
// QEMU 7.2's TCG gives every vCPU one clock that never goes back (17 M
// cross-core reads here saw no skew).
uint64_t ktest_tsc_skew_ns(void);

// Reports a measured tail (ns) against its bound (ns): one line
// "ktest: tail WHAT: N us (bound B us, asserted|measured only: ...)",
// and a failure when it is over the bound on bare metal.
void ktest_tail(const char *file, int line, const char *what, uint64_t ns, uint64_t bound_ns);
#define KT_TAIL_BOUND(what, ns, bound_ns)                                         \
    do {                                                                          \
        ktest_tail(__FILE__, __LINE__, what, ns, bound_ns);                       \
        if (ktest_failed()) return;                                               \
    } while (0)

// A bound that holds in the guest's own time, whatever the host does to
// it, such as "within two time slices": asserted on bare metal and where
// the guest's clock counts its instructions (app=ktest clock=exact, for
// QEMU's -icount: a descheduled vCPU stops its clock too); printed always.
void ktest_set_clock_exact(bool exact);
bool ktest_guest_bounds_asserted(void);
void ktest_guest_bound(const char *file, int line, const char *what, uint64_t ns, uint64_t bound_ns);
#define KT_GUEST_BOUND(what, ns, bound_ns)                                        \
    do {                                                                          \
        ktest_guest_bound(__FILE__, __LINE__, what, ns, bound_ns);                \
        if (ktest_failed()) return;                                               \
    } while (0)

#endif
