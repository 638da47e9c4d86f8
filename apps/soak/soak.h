// SPDX-License-Identifier: MIT
// app=soak: a torture program. Rounds of random "programs" drawn from one
// seed, each a few goroutines using goro.h's primitives, with their
// invariants checked as they run (docs/testing.md, *Soak*).
//
// Files: soak_main.c (arguments, rounds, the report), soak_gen.c (the
// random program of a round), soak_ops_*.c (the operations; soak_ops_big.c
// the large channel elements and stack frames, soak_ops_net.c TCP over the
// machine's loopback), soak_check.c
// (the ledgers: every G completes once, every message arrives once; the
// watcher: no runnable G waits while a P idles; the stall watchdog).
#ifndef SOAK_H
#define SOAK_H

#include "goro.h"

// ---- randomness: one stream per goroutine, split from the round's ------

typedef struct { uint64_t s; } rng_t;
static inline uint64_t rng_next(rng_t *r)          // splitmix64
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static inline uint32_t rng_below(rng_t *r, uint32_t n)  // 0..n-1, n > 0
{
    return (uint32_t)(rng_next(r) % n);
}
static inline rng_t rng_split(rng_t *r)
{
    rng_t c = { rng_next(r) };
    return c;
}

// ---- the run -------------------------------------------------------------

struct soak_args {
    uint64_t seed;              // the scheduler's: seed= (sched_seed)
    uint64_t ops;               // stop after this many operations (ops=)
    uint64_t guest_ms;          // or after this much guest time (ms=)
    uint32_t width;             // programs per round (width=)
    bool verbose;               // v=1: each round's programs
    const char *only;           // only=KIND[,KIND...]: just these programs
    // break=msg|g: the checks' own test. The run loses the first message it
    // receives (msg) or finishes its first goroutine twice (g), and must
    // fail naming it.
    const char *breakage;
};
extern struct soak_args soak_args;

// Counts one operation (a send, a lock, a timer started, ...).
static inline void soak_op(uint64_t n)
{
    extern uint64_t soak_nops;
    __atomic_fetch_add(&soak_nops, n, __ATOMIC_RELAXED);   // a statistic: read at the end of a round
}
uint64_t soak_ops_done(void);

// A broken invariant: printed (the first few), counted; the round ends
// and the run reports the seed and its replay command.
void soak_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint32_t soak_failures(void);

// Timers compare nanotime() across cores: allowed skew (docs/testing.md,
// the hypervisor rule: TCG reads the host's TSC).
#define SOAK_SKEW_NS 200000ull

// ---- the ledgers (soak_check.c) -----------------------------------------

// Every goroutine a program starts goes through soak_go: the ledger marks
// its slot started, then done exactly once when fn returns.
typedef void (*soak_fn)(void *arg);
void soak_go(soak_fn fn, void *arg);
// Waits until every goroutine started this round is done (a stall beyond
// the watchdog's limit ends the run), and checks each finished once.
void soak_join(void);
void ledger_reset(void);

// Messages: seq numbers handed out per round; a receiver checks the
// checksum and marks seq received, exactly once over the round.
struct soak_msg {
    uint32_t seq;
    uint32_t from;
    uint64_t payload;
    uint64_t sum;
};
void msg_make(struct soak_msg *m, uint32_t from, rng_t *r);
void msg_received(const struct soak_msg *m, const char *where);
// Every seq handed out this round was received once (those a program
// drops on purpose are forgiven through msg_forgive).
void msg_check_round(void);
void msg_forgive(uint32_t n);

// The watcher and the watchdog: goroutines for the whole run.
void watch_start(void);
void watch_stop(void);
void watch_report(void);            // their counters, at the end
// Ends the run at once with the failure report (the watchdog's way out).
void soak_give_up(void) __attribute__((noreturn));

// ---- operations (soak_ops_*.c) -------------------------------------------

// One program of a round: start its goroutines with soak_go and return;
// soak_join waits for them. r is this program's own stream.
typedef void (*soak_prog)(rng_t *r);
struct soak_op_kind {
    const char *name;
    soak_prog start;
    uint32_t weight;
};
// soak_gen.c: a program kind drawn by weight.
const struct soak_op_kind *soak_pick(rng_t *r);
bool soak_only_valid(void);             // only= names at least one kind
// Memory and channels a round's programs share live until the round ends:
// fn(p) runs then, after every goroutine of the round has finished.
void round_defer(void (*fn)(void *), void *p);
void *round_alloc(size_t size);         // zeroed; freed at the round's end
void round_cleanup(void);
// soak_ops_sys.c: the interrupt line the irq programs use, made waitable
// at the start and drained at the end (its counters must then agree).
void irq_setup(void);
void irq_finish(void);

void prog_spawn(rng_t *r);
void prog_chan(rng_t *r);
void prog_select(rng_t *r);
void prog_close(rng_t *r);
void prog_mutex(rng_t *r);
void prog_rwmutex(rng_t *r);
void prog_waitgroup(rng_t *r);
void prog_cond(rng_t *r);
void prog_sleep(rng_t *r);
void prog_timer(rng_t *r);
void prog_afterfunc(rng_t *r);
void prog_ticker(rng_t *r);
void prog_after(rng_t *r);
void prog_syscall(rng_t *r);
void prog_gomaxprocs(rng_t *r);
void prog_irq(rng_t *r);
void prog_bigchan(rng_t *r);
void prog_bigframe(rng_t *r);
void prog_net(rng_t *r);

// A short random duration for timers and sleeps: mostly microseconds,
// sometimes zero, now and then a few milliseconds.
uint64_t soak_duration(rng_t *r);
// Checks a timer's value: fired no earlier than start + d.
void check_not_early(const char *what, uint64_t start, uint64_t d, uint64_t fired);

#endif
