// SPDX-License-Identifier: MIT
// Memory that devices read and write (rings, packet buffers), for drivers.
// Drivers sit below kernel/ and cannot call its page allocator, so the
// boot hands it over here (dma_init) before any driver probes.
//
// Memory is identity-mapped and no IOMMU is programmed: a pointer from
// dma_alloc is also the address the device uses (dma_addr).
#ifndef GORO_DMA_H
#define GORO_DMA_H

#include <stddef.h>
#include <stdint.h>

struct dma_allocator {
    // npages contiguous zeroed pages on NUMA node node; never NULL
    // (running out is fatal in the allocator)
    void *(*alloc)(size_t npages, int node);
    // the NUMA node of core cpu
    int (*cpu_node)(uint32_t cpu);
};

// Boot, before the first driver probes.
void dma_init(const struct dma_allocator *a);
// Any context but interrupts: bytes rounded up to whole pages, on the
// node of core cpu (where the queue that uses them is served).
void *dma_alloc(size_t bytes, uint32_t cpu);

static inline uint64_t dma_addr(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

#endif
