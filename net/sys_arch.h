// SPDX-License-Identifier: MIT
// What lwIP asks of the system with NO_SYS (net/sys_arch.c): a clock in
// milliseconds (sys_now, declared by lwIP's sys.h) and random numbers.
#ifndef GORO_NET_SYS_ARCH_H
#define GORO_NET_SYS_ARCH_H

#include <stdint.h>

// Seeds net_rand. Once, before lwIP starts.
void sys_arch_init(void);
// lwIP's LWIP_RAND (arch/cc.h): stack lock held.
uint32_t net_rand(void);

#endif
