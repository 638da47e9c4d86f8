// SPDX-License-Identifier: MIT
// Host tests of the steal order (kernel/steal_order.c), the twin of that
// file: the candidates are exactly the Ps not idle or with timers, never
// the thief; every round visits each candidate exactly once, nodes nearest
// first; and the random start and stride reach every order the scheme
// allows, so no victim is always visited last.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "kernel/steal_order.h"

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;     // xorshift64*: any nonzero state
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

static uint64_t seed = 1;

static uint32_t gcd(uint32_t a, uint32_t b)
{
    return b ? gcd(b, a % b) : a;
}

// steal_pick: a start below n and a stride in 1..n coprime with n, for
// every n up to STEAL_ORDER_MAXP; and every coprime stride is reachable.
static void test_pick_start_and_coprime_stride(void)
{
    static uint8_t reached[STEAL_ORDER_MAXP + 1];
    for (uint32_t n = 0; n <= STEAL_ORDER_MAXP; n++) {
        memset(reached, 0, sizeof reached);
        for (int k = 0; k < 40; k++) {
            uint32_t start, inc;
            steal_pick(n, rnd(&seed), &start, &inc);
            CHECKF(n == 0 ? start == 0 : start < n, "n=%u: start %u", n, start);
            CHECKF(inc >= 1 && (n == 0 || inc <= n) && gcd(inc, n ? n : 1) == 1, "n=%u: stride %u", n, inc);
        }
        for (uint32_t hi = 0; n <= 64 && hi < n; hi++) {      // every high half: every coprime below n+1
            uint32_t start, inc;
            steal_pick(n, (uint64_t)hi << 32, &start, &inc);
            reached[inc] = 1;
        }
        for (uint32_t i = 1; n <= 64 && i <= n; i++)
            CHECKF(gcd(i, n) != 1 || reached[i], "n=%u: stride %u never picked", n, i);
    }
}

// steal_candidates: exactly the Ps below nprocs, not self, not idle or
// with timers, in increasing order.
static void test_candidates_are_the_busy_and_timer_ps(void)
{
    static uint64_t idle[STEAL_ORDER_WORDS], timers[STEAL_ORDER_WORDS];
    static uint32_t out[STEAL_ORDER_MAXP];
    for (int trial = 0; trial < 3000; trial++) {
        uint32_t nprocs = 1 + (uint32_t)(rnd(&seed) % STEAL_ORDER_MAXP);
        uint32_t self = (uint32_t)(rnd(&seed) % nprocs);
        int density = (int)(rnd(&seed) % 4);      // none, sparse, half, dense busy Ps
        for (uint32_t k = 0; k < STEAL_ORDER_WORDS; k++) {
            uint64_t a = rnd(&seed), b = rnd(&seed);
            idle[k] = density == 0 ? ~0ull : density == 1 ? a | b : density == 2 ? a : a & b;
            timers[k] = rnd(&seed) & rnd(&seed) & rnd(&seed);
        }
        uint32_t got = steal_candidates(idle, timers, nprocs, self, out), want = 0;
        for (uint32_t i = 0; i < nprocs; i++) {
            bool c = i != self && (!(idle[i / 64] >> (i % 64) & 1) || (timers[i / 64] >> (i % 64) & 1));
            if (!c)
                continue;
            CHECKF(want < got && out[want] == i, "trial %d: candidate %u missing or out of order", trial, i);
            want++;
        }
        CHECKF(got == want, "trial %d: %u candidates, want %u", trial, got, want);
    }
}

// One flat round over n candidates: each once.
static void test_flat_round_visits_each_candidate_once(void)
{
    static uint32_t cand[STEAL_ORDER_MAXP], out[STEAL_ORDER_MAXP];
    static uint8_t seen[4 * STEAL_ORDER_MAXP];
    for (uint32_t n = 0; n <= STEAL_ORDER_MAXP; n += n < 70 ? 1 : 37) {
        for (uint32_t i = 0; i < n; i++)
            cand[i] = 3 * i + (uint32_t)(rnd(&seed) % 3);   // increasing, with gaps
        for (int k = 0; k < 20; k++) {
            uint32_t start, inc;
            steal_pick(n, rnd(&seed), &start, &inc);
            uint32_t got = steal_order(cand, n, start, inc, false, NULL, NULL, 0, out);
            CHECKF(got == n, "n=%u: %u victims", n, got);
            memset(seen, 0, sizeof seen);
            for (uint32_t i = 0; i < n; i++)
                seen[cand[i]] = 1;
            for (uint32_t i = 0; i < got; i++)
                CHECKF(seen[out[i]]++ == 1, "n=%u: P%u not a candidate, or twice", n, out[i]);
        }
    }
}

// With nodes: every candidate once, node by node in the given order, and
// within each node the same relative order as the flat walk.
static void test_by_node_nearest_first(void)
{
    static uint32_t cand[STEAL_ORDER_MAXP], out[STEAL_ORDER_MAXP], flat[STEAL_ORDER_MAXP];
    static int32_t node_of[STEAL_ORDER_MAXP];
    uint8_t nearest[16];
    for (int trial = 0; trial < 2000; trial++) {
        uint32_t nprocs = 1 + (uint32_t)(rnd(&seed) % STEAL_ORDER_MAXP);
        int nnodes = 1 + (int)(rnd(&seed) % 16);
        for (uint32_t i = 0; i < nprocs; i++)
            node_of[i] = (int32_t)(rnd(&seed) % (uint64_t)nnodes);
        for (int j = 0; j < nnodes; j++)
            nearest[j] = (uint8_t)j;
        for (int j = nnodes - 1; j > 0; j--) {      // a random SLIT order
            int k = (int)(rnd(&seed) % (uint64_t)(j + 1));
            uint8_t t = nearest[j];
            nearest[j] = nearest[k];
            nearest[k] = t;
        }
        uint32_t n = 0;
        for (uint32_t i = 0; i < nprocs; i++)
            if (rnd(&seed) % 3)
                cand[n++] = i;
        uint32_t start, inc;
        steal_pick(n, rnd(&seed), &start, &inc);
        uint32_t got = steal_order(cand, n, start, inc, true, node_of, nearest, nnodes, out);
        uint32_t nflat = steal_order(cand, n, start, inc, false, NULL, NULL, 0, flat);
        CHECKF(got == n && nflat == n, "trial %d: %u and %u victims of %u candidates", trial, got, nflat, n);
        int rank[16];
        for (int j = 0; j < nnodes; j++)
            rank[nearest[j]] = j;
        for (uint32_t i = 1; i < got; i++)
            CHECKF(rank[node_of[out[i - 1]]] <= rank[node_of[out[i]]],
                   "trial %d: node %d visited after node %d", trial, node_of[out[i]], node_of[out[i - 1]]);
        // Within a node, the flat walk's order is kept.
        for (int j = 0; j < nnodes; j++) {
            uint32_t a = 0, b = 0;
            for (;;) {
                while (a < got && node_of[out[a]] != j)
                    a++;
                while (b < nflat && node_of[flat[b]] != j)
                    b++;
                if (a == got || b == nflat)
                    break;
                CHECKF(out[a] == flat[b], "trial %d: node %d's order differs from the flat walk", trial, j);
                a++, b++;
            }
        }
    }
}

// Randomness reaches everyone: over many rounds every candidate is
// sometimes visited first and sometimes last, so no P is always stolen
// from last.
static void test_every_victim_first_and_last(void)
{
    static uint32_t cand[STEAL_ORDER_MAXP], out[STEAL_ORDER_MAXP];
    for (uint32_t n = 2; n <= 32; n++) {
        uint32_t first[STEAL_ORDER_MAXP] = { 0 }, last[STEAL_ORDER_MAXP] = { 0 };
        for (uint32_t i = 0; i < n; i++)
            cand[i] = i;
        for (int k = 0; k < 200 * (int)n; k++) {
            uint32_t start, inc;
            steal_pick(n, rnd(&seed), &start, &inc);
            uint32_t got = steal_order(cand, n, start, inc, false, NULL, NULL, 0, out);
            first[out[0]]++;
            last[out[got - 1]]++;
        }
        for (uint32_t v = 0; v < n; v++)
            CHECKF(first[v] && last[v], "n=%u: P%u first %u times, last %u times", n, v, first[v], last[v]);
    }
}

int main(int argc, char **argv)
{
    seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 0x5eed;
    if (!seed)
        seed = 1;
    printf("seed=%llu\n", (unsigned long long)seed);
    RUN(test_pick_start_and_coprime_stride);
    RUN(test_candidates_are_the_busy_and_timer_ps);
    RUN(test_flat_round_visits_each_candidate_once);
    RUN(test_by_node_nearest_first);
    RUN(test_every_victim_first_and_last);
    return CHECK_DONE();
}
