// SPDX-License-Identifier: MIT
// lwIP's options for goro (lwIP's src/include/lwip/opt.h lists them all,
// with their defaults). docs/net.md, "The lwIP port", says how lwIP runs.
//
// The shape: lwIP without an operating system layer (NO_SYS), its raw API
// only, every call made under goro's one stack lock (net/stack.c), so it
// needs no protection of its own. IPv4 with ARP, ICMP echo, UDP, TCP and
// DHCP; no IPv6, no sockets or netconn layer (goro's own, after Go's net,
// is net/conn.c).
//
// Memory: every allocation of lwIP, its pools included, goes to
// net/netmem.c (MEM_LIBC_MALLOC with MEMP_MEM_MALLOC), which takes pages
// as they are needed, under a budget: nothing is reserved at boot, and a
// flood that would exceed the budget makes allocations fail, which lwIP
// handles by dropping what it cannot hold (never a fatal error). The
// MEMP_NUM_ counts are therefore not limits; the limits that matter for
// 10,000 connections are the budget and the per-connection windows below.
#ifndef GORO_LWIPOPTS_H
#define GORO_LWIPOPTS_H

// ---- the system layer: none (net/sys_arch.c supplies sys_now) ----
#define NO_SYS 1
#define SYS_LIGHTWEIGHT_PROT 0          // every lwIP call is under the stack lock
#define LWIP_NETCONN 0
#define LWIP_SOCKET 0
#define LWIP_NETIF_API 0
#define LWIP_TCPIP_CORE_LOCKING 0
#define LWIP_CALLBACK_API 1
#define LWIP_TIMERS 1                   // sys_check_timeouts, run by net/stack.c

// ---- memory (net/netmem.c) ----
// lwIP's "C library" malloc, free and calloc are net/netmem.c's, by the
// <stdlib.h> its heap includes (net/lwip/libc/stdlib.h): lwIP 2.1 and 2.2
// name the hook differently, and both take it from there.
#define MEM_LIBC_MALLOC 1
#define MEMP_MEM_MALLOC 1
#define MEM_ALIGNMENT 16
// Counts for the few structures whose number lwIP itself checks against
// (these are not pool sizes with MEMP_MEM_MALLOC).
#define MEMP_NUM_TCP_PCB 16384
#define MEMP_NUM_TCP_PCB_LISTEN 256
#define MEMP_NUM_UDP_PCB 256
#define MEMP_NUM_TCP_SEG 65535
#define MEMP_NUM_PBUF 16384
#define PBUF_POOL_SIZE 16384
#define MEMP_NUM_REASSDATA 32
#define MEMP_NUM_FRAG_PBUF 64
#define MEMP_NUM_ARP_QUEUE 256
#define MEMP_NUM_SYS_TIMEOUT (LWIP_NUM_SYS_TIMEOUT_INTERNAL + 4)

// ---- link layer ----
#define LWIP_ARP 1
#define LWIP_ETHERNET 1
#define ARP_TABLE_SIZE 64
#define ARP_QUEUEING 1                  // the first packets to a new neighbour wait for its answer
#define ARP_QUEUE_LEN 8
#define ETH_PAD_SIZE 0
#define LWIP_NETIF_STATUS_CALLBACK 1    // DHCP's address, reported
#define LWIP_NETIF_LINK_CALLBACK 1
#define LWIP_NETIF_HOSTNAME 1           // "goro" in DHCP requests
// 127.0.0.1 (lwIP's own loopback interface) and traffic to the machine's
// own address are looped back through a queue that the stack lock's
// holder drains before it lets go (net/stack.c).
#define LWIP_NETIF_LOOPBACK 1
#define LWIP_HAVE_LOOPIF 1
#define LWIP_LOOPBACK_MAX_PBUFS 0
#define LWIP_NETIF_LOOPBACK_MULTITHREADING 0
#define LWIP_NETIF_TX_SINGLE_PBUF 0
// Checksums are computed and checked in software, per interface: the
// loopback interface skips them (net/stack.c), a device that offloads
// them can too.
#define LWIP_CHECKSUM_CTRL_PER_NETIF 1

// ---- IPv4 ----
#define LWIP_IPV4 1
#define LWIP_IPV6 0
#define IP_FORWARD 0
#define IP_REASSEMBLY 1
#define IP_FRAG 1
#define IP_REASS_MAX_PBUFS 64           // fragments that never complete hold at most this many
#define IP_DEFAULT_TTL 64
#define LWIP_ICMP 1
#define LWIP_BROADCAST_PING 0
#define LWIP_RAW 0
#define LWIP_IGMP 0
#define LWIP_DNS 0
#define LWIP_AUTOIP 0
#define LWIP_DHCP 1
#define LWIP_DHCP_CHECK_LINK_UP 1
#define DHCP_DOES_ARP_CHECK 0           // lwIP 2.1: QEMU's and most servers' offers are not checked
#define LWIP_DHCP_DOES_ACD_CHECK 0      // lwIP 2.2's name for it

// ---- UDP ----
#define LWIP_UDP 1
#define LWIP_UDPLITE 0

// ---- TCP ----
#define LWIP_TCP 1
#define TCP_MSS 1460
// Windows as Linux's starting ones, without window scaling: 64,240 bytes
// (44 segments) in each direction per connection. A window is a promise,
// not a reservation: memory is taken as data arrives or is written.
#define TCP_WND (44 * TCP_MSS)
#define TCP_SND_BUF (44 * TCP_MSS)
#define TCP_SND_QUEUELEN ((4 * TCP_SND_BUF + TCP_MSS - 1) / TCP_MSS)
#define TCP_SNDLOWAT (TCP_SND_BUF / 2)
#define TCP_QUEUE_OOSEQ 1
#define TCP_OOSEQ_MAX_PBUFS 64          // out-of-order data held per connection
#define TCP_OOSEQ_MAX_BYTES (64 * TCP_MSS)
#define LWIP_TCP_SACK_OUT 0
// Half-open connections are counted and bounded by net/synq.c, not by
// lwIP's backlog (a u8_t, at most 255), through one extension argument.
#define TCP_LISTEN_BACKLOG 0
#define LWIP_TCP_PCB_NUM_EXT_ARGS 1
#define LWIP_TCP_KEEPALIVE 0
#define LWIP_TCP_TIMESTAMPS 0
#define TCP_OVERSIZE TCP_MSS
#define SO_REUSE 1                      // a listener binds over connections in TIME_WAIT, as Go's does
#define LWIP_ALTCP 0
#define LWIP_WND_SCALE 0
#define LWIP_EVENT_API 0
// Initial sequence numbers: a passive open's is a SYN cookie
// (net/syncookie.c), an active open's from the port's generator
// (LWIP_RAND, arch/cc.h). Without the hook lwIP counts them up from 6510
// by its tick count, which a peer can predict and so inject into
// another's connection (RFC 6528).
#include <stdint.h>
uint32_t syncookie_isn(const void *local_ip, uint16_t local_port, const void *remote_ip, uint16_t remote_port);
#define LWIP_HOOK_TCP_ISN(local_ip, local_port, remote_ip, remote_port) \
    syncookie_isn(local_ip, local_port, remote_ip, remote_port)

// ---- hooks (net/hooks.c): test filters and guards on the receive path ----
struct pbuf;
struct netif;
int net_hook_ip4_input(struct pbuf *p, struct netif *inp);
#define LWIP_HOOK_IP4_INPUT(p, inp) net_hook_ip4_input(p, inp)
struct tcp_pcb;
struct tcp_hdr;
int net_hook_tcp_input(struct tcp_pcb *pcb, const struct tcp_hdr *hdr, const struct pbuf *p);
#define LWIP_HOOK_TCP_INPACKET_PCB(pcb, hdr, optlen, opt1len, opt2, p) \
    ((void)(optlen), (void)(opt1len), (void)(opt2), net_hook_tcp_input(pcb, hdr, p))

// ---- statistics: off; LWIP_DEBUG undefined (lwIP tests it with #ifdef); asserts on (cc.h) ----
#define LWIP_STATS 0
#define LWIP_STATS_DISPLAY 0
#define MEMP_OVERFLOW_CHECK 0

#endif
