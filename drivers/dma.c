// SPDX-License-Identifier: MIT
// DMA memory for drivers (drivers/dma.h): the kernel's page allocator,
// handed over at boot.
#include "drivers/dma.h"
#include "lib/panic.h"

static struct dma_allocator alloc;

void dma_init(const struct dma_allocator *a)
{
    alloc = *a;
}

void *dma_alloc(size_t bytes, uint32_t cpu)
{
    ASSERT(alloc.alloc && bytes > 0);
    return alloc.alloc((bytes + 4095) / 4096, alloc.cpu_node(cpu));
}
