// SPDX-License-Identifier: MIT
// Host tests of the steal order (kernel/steal_order.c), the twin of that
// file: every round visits each other P exactly once, never the thief,
// nodes nearest first, and the random start and stride reach every order
// the scheme allows, so no victim is always visited last.
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

static void test_strides_are_the_coprimes(void)
{
    static struct steal_strides s;
    for (uint32_t n = 1; n <= STEAL_ORDER_MAXP; n++) {
        steal_strides_init(&s, n);
        uint32_t want = 0;
        for (uint32_t i = 1; i <= n; i++)
            want += gcd(i, n) == 1;
        CHECKF(s.n == want, "n=%u: %u strides, want %u", n, s.n, want);
        for (uint32_t i = 0; i < s.n; i++)
            CHECKF(gcd(s.stride[i], n) == 1, "n=%u: stride %u shares a factor", n, s.stride[i]);
    }
}

// One flat round: every other P once, the thief never.
static void test_flat_round_visits_each_other_p_once(void)
{
    static struct steal_strides s;
    uint32_t out[STEAL_ORDER_MAXP];
    for (uint32_t n = 1; n <= 64; n++) {
        steal_strides_init(&s, n);
        for (uint32_t self = 0; self < n; self++)
            for (int k = 0; k < 40; k++) {
                uint64_t r = rnd(&seed);
                uint32_t got = steal_order(&s, self, r, false, NULL, NULL, 0, out);
                CHECKF(got == n - 1, "n=%u self=%u: %u victims", n, self, got);
                uint8_t seen[STEAL_ORDER_MAXP] = { 0 };
                for (uint32_t i = 0; i < got; i++) {
                    CHECKF(out[i] < n && out[i] != self, "n=%u self=%u: victim %u", n, self, out[i]);
                    CHECKF(!seen[out[i]]++, "n=%u self=%u: P%u twice", n, self, out[i]);
                }
            }
    }
}

// With nodes: every other P once, node by node in the given order, and
// within each node the same relative order as the flat walk.
static void test_by_node_nearest_first(void)
{
    static struct steal_strides s;
    uint32_t out[STEAL_ORDER_MAXP], flat[STEAL_ORDER_MAXP];
    int32_t node_of[STEAL_ORDER_MAXP];
    uint8_t nearest[8];
    for (int trial = 0; trial < 2000; trial++) {
        uint32_t n = 1 + (uint32_t)(rnd(&seed) % 64);
        int nnodes = 1 + (int)(rnd(&seed) % 8);
        for (uint32_t i = 0; i < n; i++)
            node_of[i] = (int32_t)(rnd(&seed) % (uint64_t)nnodes);
        for (int j = 0; j < nnodes; j++)
            nearest[j] = (uint8_t)j;
        for (int j = nnodes - 1; j > 0; j--) {      // a random SLIT order
            int k = (int)(rnd(&seed) % (uint64_t)(j + 1));
            uint8_t t = nearest[j];
            nearest[j] = nearest[k];
            nearest[k] = t;
        }
        steal_strides_init(&s, n);
        uint32_t self = (uint32_t)(rnd(&seed) % n);
        uint64_t r = rnd(&seed);
        uint32_t got = steal_order(&s, self, r, true, node_of, nearest, nnodes, out);
        uint32_t nflat = steal_order(&s, self, r, false, NULL, NULL, 0, flat);
        CHECKF(got == n - 1 && nflat == n - 1, "trial %d: %u and %u victims of %u Ps", trial, got, nflat, n);
        int rank[8];
        for (int j = 0; j < nnodes; j++)
            rank[nearest[j]] = j;
        uint8_t seen[STEAL_ORDER_MAXP] = { 0 };
        for (uint32_t i = 0; i < got; i++) {
            CHECKF(out[i] != self && !seen[out[i]]++, "trial %d: victim %u", trial, out[i]);
            if (i)
                CHECKF(rank[node_of[out[i - 1]]] <= rank[node_of[out[i]]],
                       "trial %d: node %d visited after node %d", trial, node_of[out[i]],
                       node_of[out[i - 1]]);
        }
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

// Randomness reaches everyone: over many rounds every victim is sometimes
// visited first and sometimes last, so no P is always stolen from last.
static void test_every_victim_first_and_last(void)
{
    static struct steal_strides s;
    uint32_t out[STEAL_ORDER_MAXP];
    for (uint32_t n = 3; n <= 32; n++) {
        steal_strides_init(&s, n);
        uint32_t first[STEAL_ORDER_MAXP] = { 0 }, last[STEAL_ORDER_MAXP] = { 0 };
        for (int k = 0; k < 200 * (int)n; k++) {
            uint32_t got = steal_order(&s, 0, rnd(&seed), false, NULL, NULL, 0, out);
            first[out[0]]++;
            last[out[got - 1]]++;
        }
        for (uint32_t v = 1; v < n; v++)
            CHECKF(first[v] && last[v], "n=%u: P%u first %u times, last %u times", n, v, first[v], last[v]);
    }
}

int main(int argc, char **argv)
{
    seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 0x5eed;
    if (!seed)
        seed = 1;
    printf("seed=%llu\n", (unsigned long long)seed);
    RUN(test_strides_are_the_coprimes);
    RUN(test_flat_round_visits_each_other_p_once);
    RUN(test_by_node_nearest_first);
    RUN(test_every_victim_first_and_last);
    return CHECK_DONE();
}
