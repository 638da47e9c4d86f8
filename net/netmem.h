// SPDX-License-Identifier: MIT
// lwIP's memory (net/netmem.c): every allocation of the stack, its pools
// included, under a budget. Stack lock held (net/stack.h): lwIP allocates
// only there.
#ifndef GORO_NET_NETMEM_H
#define GORO_NET_NETMEM_H

#include <stddef.h>
#include <stdint.h>

// NULL when the budget would be exceeded; lwIP then drops what it cannot
// hold. Blocks are 16-byte aligned.
void *netmem_alloc(size_t size);
void *netmem_calloc(size_t n, size_t size);
void netmem_free(void *p);

struct netmem_stats {
    uint64_t pages;             // pages taken from the page allocator (never given back)
    uint64_t limit_pages;       // the budget
    uint64_t in_use;            // bytes in live blocks, headers included
    uint64_t allocs, frees;     // calls
    uint64_t failures;          // allocations refused by the budget
};
// A snapshot (racy reads; no lock needed).
void netmem_stats(struct netmem_stats *s);
// The budget in pages (0: the default, a quarter of the machine's memory).
void netmem_set_limit(uint64_t pages);

#endif
