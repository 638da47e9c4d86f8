// SPDX-License-Identifier: MIT
// lwIP's compiler and platform port for goro (lwIP's src/include/lwip/arch.h
// says what a port may define here): a freestanding x86-64 build with
// gcc's own stdint.h and limits.h, goro's string functions (net/lwip/libc),
// and lwIP's diagnostics and asserts on the kernel's console and panic.
#ifndef GORO_LWIP_CC_H
#define GORO_LWIP_CC_H

#include <stdint.h>

#define BYTE_ORDER LITTLE_ENDIAN

// No inttypes.h, unistd.h or ctype.h in a freestanding build: the format
// strings and lwIP's own character classes instead.
#define LWIP_NO_INTTYPES_H 1
#define LWIP_NO_UNISTD_H 1
#define LWIP_NO_CTYPE_H 1
#define X8_F "02x"
#define U16_F "hu"
#define S16_F "hd"
#define X16_F "hx"
#define U32_F "u"
#define S32_F "d"
#define X32_F "x"
#define SZT_F "zu"
typedef long ssize_t;
#define SSIZE_MAX INT64_MAX

// The kernel's console: callable from every context lwIP runs in (a
// goroutine, g0, sysmon's interrupt), under every lock.
#include "lib/panic.h"
#include "lib/printf.h"
#define LWIP_PLATFORM_DIAG(x) do { kprintf x; } while (0)
// An lwIP assertion is a bug in lwIP or in its use: the machine stops,
// naming it, as any other kernel assertion does.
#define LWIP_PLATFORM_ASSERT(x) panic("lwIP assertion failed: %s (%s:%d)", x, __FILE__, __LINE__)

// Initial sequence numbers and DHCP transaction ids (net/sys_arch.c): not
// predictable from outside.
uint32_t net_rand(void);
#define LWIP_RAND() net_rand()

#endif
