// SPDX-License-Identifier: MIT
// <stdlib.h> for lwIP's sources, which are compiled without the host's C
// library headers (-nostdinc), and are its only users:
//  - malloc, free and calloc, which lwIP's heap (core/mem.c, with
//    MEM_LIBC_MALLOC: lwipopts.h) calls for all of lwIP's memory, are
//    net/netmem.c's allocator, not the kernel's malloc;
//  - atoi (netif_find's interface number).
#ifndef GORO_LWIP_LIBC_STDLIB_H
#define GORO_LWIP_LIBC_STDLIB_H
#include <stddef.h>
#include "net/netmem.h"
#define malloc netmem_alloc
#define free netmem_free
#define calloc netmem_calloc
static inline int atoi(const char *s)
{
    int n = 0;
    while (*s >= '0' && *s <= '9')
        n = n * 10 + (*s++ - '0');
    return n;
}
#endif
