// SPDX-License-Identifier: MIT
// Host tests for kernel/pagepool.c: no page is handed out twice, runs are
// contiguous and first-fit, frees coalesce, double frees are caught, and
// ranges are trimmed (add_free) or widened (reserve) to whole pages.
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "kernel/page.h"
#include "kernel/pagepool.h"

#define BASE 0x100000ull    // not 0, so base-relative arithmetic is exercised

static struct page_pool pp;

// A pool of npages at BASE, every page allocated; the bitmap is exactly as
// large as page_pool_bitmap_bytes says, so ASan catches any overrun.
static void pool_new(uint64_t npages)
{
    static uint64_t *bitmap;
    free(bitmap);
    size_t bytes = page_pool_bitmap_bytes(npages);
    bitmap = malloc(bytes ? bytes : 1);
    memset(bitmap, 0xa5, bytes);    // init must not trust the memory
    page_pool_init(&pp, BASE, npages, bitmap);
}

static void pool_new_free(uint64_t npages)
{
    pool_new(npages);
    page_pool_add_free(&pp, BASE, npages * PAGE_SIZE);
}

static uint64_t addr_of(uint64_t page)
{
    return BASE + page * PAGE_SIZE;
}

static bool is_free(uint64_t page)
{
    return pp.bitmap[page / 64] >> (page % 64) & 1;
}

// nfree matches the bitmap, and the bits past npages stay 0.
static bool consistent(void)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < pp.npages; i++)
        n += is_free(i);
    uint64_t words = page_pool_bitmap_bytes(pp.npages) / 8;
    for (uint64_t i = pp.npages; i < words * 64; i++)
        if (is_free(i))
            return false;
    return n == pp.nfree;
}

static void test_bitmap_bytes(void)
{
    CHECK(page_pool_bitmap_bytes(0) == 0);
    CHECK(page_pool_bitmap_bytes(1) == 8);
    CHECK(page_pool_bitmap_bytes(64) == 8);
    CHECK(page_pool_bitmap_bytes(65) == 16);
    CHECK(page_pool_bitmap_bytes(1ull << 24) == (1ull << 24) / 8);  // 64 GiB of pages
}

static void test_starts_allocated(void)
{
    pool_new(100);
    CHECK(pp.nfree == 0 && consistent());
    CHECK(page_pool_alloc(&pp, 1) == 0);
    pool_new(0);
    CHECK(page_pool_alloc(&pp, 1) == 0);
    page_pool_add_free(&pp, BASE, 10 * PAGE_SIZE);
    CHECK(pp.nfree == 0);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_no_double_allocation(void)
{
    enum { N = 1000 };      // not a multiple of 64: the last word is partial
    static uint64_t got[N + 1];
    pool_new_free(N);
    CHECK(pp.nfree == N);
    int n = 0;
    for (uint64_t a; n <= N && (a = page_pool_alloc(&pp, 1)) != 0; n++)
        got[n] = a;
    CHECKF(n == N, "allocated %d of %d pages", n, N);
    CHECK(pp.nfree == 0 && consistent());
    qsort(got, (size_t)n, sizeof got[0], cmp_u64);
    for (int i = 0; i < n; i++) {
        CHECKF(got[i] == addr_of((uint64_t)i), "page %d is %#llx", i, (unsigned long long)got[i]);
        CHECK(got[i] % PAGE_SIZE == 0);
    }
    CHECK(page_pool_alloc(&pp, 1) == 0);
}

static void test_first_fit_by_address(void)
{
    pool_new_free(200);
    for (uint64_t i = 0; i < 200; i++)
        CHECK(page_pool_alloc(&pp, 1) == addr_of(i));
    CHECK(page_pool_free(&pp, addr_of(150), 1));
    CHECK(page_pool_free(&pp, addr_of(7), 1));
    CHECK(page_pool_alloc(&pp, 1) == addr_of(7));   // the lowest free page
    CHECK(page_pool_alloc(&pp, 1) == addr_of(150));
    CHECK(consistent());
}

static void test_contiguous_runs(void)
{
    pool_new_free(300);
    uint64_t a = page_pool_alloc(&pp, 5);
    uint64_t b = page_pool_alloc(&pp, 70);      // spans word boundaries
    uint64_t c = page_pool_alloc(&pp, 1);
    CHECK(a == addr_of(0) && b == addr_of(5) && c == addr_of(75));
    for (uint64_t i = 0; i < 76; i++)
        CHECK(!is_free(i));
    CHECK(is_free(76) && pp.nfree == 300 - 76 && consistent());
    // A hole of 5 is skipped by a run of 6 and reused by a run of 5.
    CHECK(page_pool_free(&pp, a, 5));
    CHECK(page_pool_alloc(&pp, 6) == addr_of(76));
    CHECK(page_pool_alloc(&pp, 5) == addr_of(0));
    CHECK(page_pool_alloc(&pp, 300 - 82 + 1) == 0);
    CHECK(page_pool_alloc(&pp, 300 - 82) == addr_of(82));
    CHECK(pp.nfree == 0 && consistent());
}

static void test_frees_coalesce(void)
{
    enum { N = 256 };
    pool_new_free(N);
    for (uint64_t i = 0; i < N; i++)
        CHECK(page_pool_alloc(&pp, 1) == addr_of(i));
    // Every other page free: half the pool, but no run of two.
    for (uint64_t i = 0; i < N; i += 2)
        CHECK(page_pool_free(&pp, addr_of(i), 1));
    CHECK(pp.nfree == N / 2);
    CHECK(page_pool_alloc(&pp, 2) == 0);
    CHECK(pp.nfree == N / 2 && consistent());
    for (uint64_t i = 1; i < N; i += 2)
        CHECK(page_pool_free(&pp, addr_of(i), 1));
    CHECK(page_pool_alloc(&pp, N) == addr_of(0));
    CHECK(pp.nfree == 0);
    CHECK(page_pool_free(&pp, addr_of(0), N));
    CHECK(pp.nfree == N && consistent());
}

static void test_exhaustion(void)
{
    pool_new_free(64);
    CHECK(page_pool_alloc(&pp, 0) == 0);
    CHECK(page_pool_alloc(&pp, 65) == 0);
    CHECK(page_pool_alloc(&pp, UINT64_MAX) == 0);
    CHECK(pp.nfree == 64);
    CHECK(page_pool_alloc(&pp, 64) == addr_of(0));
    CHECK(page_pool_alloc(&pp, 1) == 0);
    CHECK(pp.nfree == 0 && consistent());
}

static void test_double_free(void)
{
    pool_new_free(128);
    uint64_t a = page_pool_alloc(&pp, 10);
    CHECK(page_pool_free(&pp, a + 2 * PAGE_SIZE, 3));
    uint64_t before[2] = { pp.bitmap[0], pp.bitmap[1] };
    uint64_t nfree = pp.nfree;
    CHECK(!page_pool_free(&pp, a + 2 * PAGE_SIZE, 3));     // the same pages again
    CHECK(!page_pool_free(&pp, a, 10));                     // overlaps the freed ones
    CHECK(!page_pool_free(&pp, a + 4 * PAGE_SIZE, 1));
    CHECK(!page_pool_free(&pp, addr_of(10), 1));            // never allocated
    CHECK(pp.nfree == nfree && pp.bitmap[0] == before[0] && pp.bitmap[1] == before[1]);
    CHECK(page_pool_free(&pp, a, 2) && page_pool_free(&pp, a + 5 * PAGE_SIZE, 5));
    CHECK(pp.nfree == 128 && consistent());
}

static void test_free_outside_pool(void)
{
    pool_new_free(64);
    CHECK(page_pool_alloc(&pp, 64) == addr_of(0));
    CHECK(!page_pool_free(&pp, BASE - PAGE_SIZE, 1));
    CHECK(!page_pool_free(&pp, BASE - PAGE_SIZE, 2));       // starts below the pool
    CHECK(!page_pool_free(&pp, addr_of(64), 1));
    CHECK(!page_pool_free(&pp, addr_of(60), 5));            // runs past the end
    CHECK(!page_pool_free(&pp, addr_of(60), UINT64_MAX));
    CHECK(!page_pool_free(&pp, addr_of(1) + 8, 1));          // not page-aligned
    CHECK(!page_pool_free(&pp, addr_of(1), 0));
    CHECK(!page_pool_free(&pp, UINT64_MAX & ~(PAGE_SIZE - 1), 1));
    CHECK(pp.nfree == 0 && consistent());
    CHECK(page_pool_free(&pp, addr_of(60), 4));
    CHECK(pp.nfree == 4);
}

static void test_add_free_trims(void)
{
    pool_new(16);
    // [BASE+100, BASE+100+3 pages) holds pages 1 and 2 whole, 0 and 3 in part.
    page_pool_add_free(&pp, BASE + 100, 3 * PAGE_SIZE);
    CHECK(pp.nfree == 2 && !is_free(0) && is_free(1) && is_free(2) && !is_free(3));
    page_pool_add_free(&pp, addr_of(5) + 1, PAGE_SIZE);   // no whole page
    page_pool_add_free(&pp, addr_of(6), PAGE_SIZE - 1);
    page_pool_add_free(&pp, addr_of(7), 0);
    CHECK(pp.nfree == 2);
    page_pool_add_free(&pp, BASE + 100, 3 * PAGE_SIZE);    // again: counted once
    CHECK(pp.nfree == 2);
    // Clipped to the pool at both ends, even when addr + len overflows.
    page_pool_add_free(&pp, 0, BASE + PAGE_SIZE);
    CHECK(pp.nfree == 3 && is_free(0));
    page_pool_add_free(&pp, addr_of(14), UINT64_MAX);
    CHECK(pp.nfree == 5 && is_free(14) && is_free(15));
    page_pool_add_free(&pp, addr_of(16), 100 * PAGE_SIZE);
    page_pool_add_free(&pp, 0, 10);
    CHECK(pp.nfree == 5 && consistent());
}

static void test_reserve_widens(void)
{
    pool_new_free(16);
    page_pool_reserve(&pp, addr_of(1) + 1, 1);              // one byte: its whole page
    CHECK(pp.nfree == 15 && !is_free(1) && is_free(0) && is_free(2));
    page_pool_reserve(&pp, addr_of(3) - 1, 2);              // straddles 2 and 3
    CHECK(pp.nfree == 13 && !is_free(2) && !is_free(3) && is_free(4));
    page_pool_reserve(&pp, addr_of(1), 3 * PAGE_SIZE);      // already reserved: no change
    CHECK(pp.nfree == 13);
    page_pool_reserve(&pp, addr_of(5), 0);                  // empty
    CHECK(pp.nfree == 13);
    page_pool_reserve(&pp, 0, BASE + 1);                    // from below the pool
    CHECK(pp.nfree == 12 && !is_free(0));
    page_pool_reserve(&pp, addr_of(15) + 5, UINT64_MAX);    // past the end, overflowing
    CHECK(pp.nfree == 11 && !is_free(15) && consistent());
    // Reserved pages are never handed out.
    for (uint64_t a; (a = page_pool_alloc(&pp, 1)) != 0;)
        CHECK(a >= addr_of(4) && a < addr_of(15));
}

static void test_unaligned_ranges(void)
{
    pool_new(200);
    page_pool_add_free(&pp, addr_of(10) + 123, 50 * PAGE_SIZE);    // pages 11..59
    page_pool_reserve(&pp, addr_of(20) + 4095, 4096 + 2);          // pages 20..22
    CHECK(pp.nfree == 49 - 3 && consistent());
    CHECK(page_pool_alloc(&pp, 9) == addr_of(11));
    CHECK(page_pool_alloc(&pp, 1) == addr_of(23));
    CHECK(page_pool_alloc(&pp, 37) == 0);
    CHECK(page_pool_alloc(&pp, 36) == addr_of(24));
    CHECK(pp.nfree == 0 && consistent());
}

// The lowest start of n free pages in the model, or -1.
static long model_first_fit(const bool *model, long npages, long n)
{
    for (long i = 0, run = 0; i < npages; i++) {
        run = model[i] ? run + 1 : 0;
        if (run == n)
            return i - n + 1;
    }
    return -1;
}

// Random allocations and frees against a plain array: every result must be
// the model's first fit, and every pool must stay consistent.
static void test_random_against_model(void)
{
    enum { N = 777, ROUNDS = 20000, LIVE = 256 };
    static bool model[N];
    static struct { uint64_t page, n; } live[LIVE];
    int nlive = 0;
    uint64_t rng = 88172645463325252ull;
    pool_new_free(N);
    for (long i = 0; i < N; i++)
        model[i] = true;
    for (int r = 0; r < ROUNDS && !check_failed_now; r++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        if (nlive < LIVE && (rng & 3) != 0) {
            uint64_t n = (rng >> 8) % 4 == 0 ? 1 + (rng >> 16) % 90 : 1;
            long want = model_first_fit(model, N, (long)n);
            uint64_t a = page_pool_alloc(&pp, n);
            CHECKF(want < 0 ? a == 0 : a == addr_of((uint64_t)want),
                   "round %d: alloc(%llu) = %#llx, model says page %ld", r,
                   (unsigned long long)n, (unsigned long long)a, want);
            if (a == 0)
                continue;
            uint64_t page = (a - BASE) / PAGE_SIZE;
            for (uint64_t i = 0; i < n; i++)
                model[page + i] = false;
            live[nlive].page = page;
            live[nlive++].n = n;
        } else if (nlive > 0) {
            int k = (int)((rng >> 20) % (uint64_t)nlive);
            CHECK(page_pool_free(&pp, addr_of(live[k].page), live[k].n));
            CHECK(!page_pool_free(&pp, addr_of(live[k].page), live[k].n));
            for (uint64_t i = 0; i < live[k].n; i++)
                model[live[k].page + i] = true;
            live[k] = live[--nlive];
        }
        CHECK(consistent());
    }
}

int main(void)
{
    RUN(test_bitmap_bytes);
    RUN(test_starts_allocated);
    RUN(test_no_double_allocation);
    RUN(test_first_fit_by_address);
    RUN(test_contiguous_runs);
    RUN(test_frees_coalesce);
    RUN(test_exhaustion);
    RUN(test_double_free);
    RUN(test_free_outside_pool);
    RUN(test_add_free_trims);
    RUN(test_reserve_widens);
    RUN(test_unaligned_ranges);
    RUN(test_random_against_model);
    return CHECK_DONE();
}
