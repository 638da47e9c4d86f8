// SPDX-License-Identifier: MIT
// goro's port of lwIP, through lwIP's raw API over its loopback interface:
// the stack lock, lwIP's memory (net/netmem.c), its clock and its timers.
// Everything looped back is delivered by net_unlock, which drains the
// loopback queue before it lets go; so each exchange below completes
// within the unlock that follows the send.
#include "kernel/ktest.h"
#include "net/netmem.h"
#include "net/hooks.h"
#include "net/stack.h"
#include "lib/string.h"
#include "lib/printf.h"
#include <lwip/ip_addr.h>
#include <lwip/pbuf.h>
#include <lwip/tcp.h>
#include <lwip/udp.h>
#include <lwip/timeouts.h>
#include <lwip/priv/tcp_priv.h>

static char got[64];
static uint32_t ngot;
static uint16_t from_port;

static void udp_got(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
    (void)arg, (void)pcb, (void)addr;
    ngot = pbuf_copy_partial(p, got, sizeof got - 1, 0);
    from_port = port;
    pbuf_free(p);
}

// A datagram to 127.0.0.1 arrives, from the port it was sent from.
KTEST(lwip_port_udp_loopback)
{
    net_start();
    net_lock();
    struct udp_pcb *a = udp_new(), *b = udp_new();
    KT_ASSERT(a && b);
    KT_ASSERT_EQ(udp_bind(a, IP4_ADDR_ANY, 7007), ERR_OK);
    KT_ASSERT_EQ(udp_bind(b, IP4_ADDR_ANY, 0), ERR_OK);
    udp_recv(a, udp_got, 0);
    ngot = 0;
    struct pbuf *p = pbuf_alloc(PBUF_TRANSPORT, 5, PBUF_RAM);
    KT_ASSERT(p);
    memcpy(p->payload, "hello", 5);
    ip_addr_t lo;
    IP_ADDR4(&lo, 127, 0, 0, 1);
    KT_ASSERT_EQ(udp_sendto(b, p, &lo, 7007), ERR_OK);
    pbuf_free(p);
    uint16_t bport = b->local_port;
    net_unlock();               // the loopback queue is drained here
    net_lock();
    udp_remove(a);
    udp_remove(b);
    net_unlock();
    KT_ASSERT_EQ(ngot, 5);
    KT_ASSERT(memcmp(got, "hello", 5) == 0);
    KT_ASSERT_EQ(from_port, bport);
}

static struct tcp_pcb *accepted;
static uint32_t connected, tcp_ngot;
static char tcp_got[64];

static err_t got_tcp(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    (void)arg, (void)err;
    if (!p)
        return ERR_OK;          // the peer closed
    tcp_ngot += pbuf_copy_partial(p, tcp_got + tcp_ngot, (u16_t)(sizeof tcp_got - 1 - tcp_ngot), 0);
    tcp_recved(pcb, p->tot_len);
    pbuf_free(p);
    return ERR_OK;
}

static err_t got_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
    (void)arg;
    if (err != ERR_OK || !pcb)
        return ERR_VAL;
    accepted = pcb;
    tcp_recv(pcb, got_tcp);
    return ERR_OK;
}

// What lwIP's connection lists hold, for a connect that found no free
// local port (ERR_BUF: tcp_new_port met every ephemeral port in use): each
// list's length, up to a bound that a list bent into a cycle would pass,
// and how many of its connections hold an ephemeral port. Stack lock held.
static void pcb_census(void)
{
    static const char *const names[NUM_TCP_PCB_LISTS] = { "listen", "bound", "active", "time-wait" };
    for (int i = 0; i < NUM_TCP_PCB_LISTS; i++) {
        uint32_t n = 0, ephemeral = 0;
        for (struct tcp_pcb *pcb = *tcp_pcb_lists[i]; pcb && n <= MEMP_NUM_TCP_PCB; pcb = pcb->next, n++)
            ephemeral += pcb->local_port >= 0xc000;     // lwIP's range: IANA's dynamic ports, 0xc000-0xffff
        printf("ktest: lwIP's %s list: %s%u connections, %u on an ephemeral port\n", names[i],
               n > MEMP_NUM_TCP_PCB ? "more than " : "", n, ephemeral);
    }
}

static err_t got_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
    (void)arg, (void)pcb;
    connected += err == ERR_OK;
    return ERR_OK;
}

// The three-way handshake, a write and its receipt over 127.0.0.1, then
// both ends closed and every byte of lwIP's memory back (TIME_WAIT's
// connection aside, which lwIP frees later).
KTEST(lwip_port_tcp_loopback)
{
    net_start();
    struct netmem_stats before, after;
    netmem_stats(&before);
    net_lock();
    struct tcp_pcb *l = tcp_new();
    KT_ASSERT(l);
    KT_ASSERT_EQ(tcp_bind(l, IP4_ADDR_ANY, 7008), ERR_OK);
    struct tcp_pcb *lis = tcp_listen(l);
    KT_ASSERT(lis);
    tcp_accept(lis, got_accept);
    struct tcp_pcb *c = tcp_new();
    KT_ASSERT(c);
    ip_addr_t lo;
    IP_ADDR4(&lo, 127, 0, 0, 1);
    accepted = 0;
    connected = tcp_ngot = 0;
    err_t err = tcp_connect(c, &lo, 7008, got_connected);
    if (err != ERR_OK) {
        pcb_census();
        tcp_abort(c);
        tcp_close(lis);
        net_unlock();
        KT_FAIL("tcp_connect to 127.0.0.1:7008: lwIP error %d", err);
    }
    net_unlock();
    KT_ASSERT_EQ(connected, 1);
    KT_ASSERT(accepted != 0);
    net_lock();
    KT_ASSERT_EQ(tcp_write(c, "over loopback", 13, TCP_WRITE_FLAG_COPY), ERR_OK);
    KT_ASSERT_EQ(tcp_output(c), ERR_OK);
    net_unlock();
    KT_ASSERT_EQ(tcp_ngot, 13);
    KT_ASSERT(memcmp(tcp_got, "over loopback", 13) == 0);
    net_lock();
    tcp_arg(accepted, 0);
    tcp_recv(accepted, 0);
    KT_ASSERT_EQ(tcp_close(accepted), ERR_OK);
    KT_ASSERT_EQ(tcp_close(c), ERR_OK);
    KT_ASSERT_EQ(tcp_close(lis), ERR_OK);
    net_unlock();
    netmem_stats(&after);
    KT_ASSERT(after.allocs > before.allocs);
    KT_ASSERT_EQ(after.failures, before.failures);
}

static uint32_t rto_conn_errs;

static void rto_conn_err(void *arg, err_t err)
{
    (void)arg, (void)err;
    rto_conn_errs++;            // lwIP has freed the connection
}

// A connection whose peer goes silent backs its retransmission timeout off
// to the ceiling (NET_TCP_RTO_MAX_TICKS, net/stack.c) and no further:
// uncapped, lwIP's backoff passes 3 minutes by the 7th retransmission at
// the latest (an estimate of at least 3 ticks, times 128; here, with no RTT
// sample taken, 6 ticks, so by the 6th). Each wait is cut short by setting
// rtime to rto (the next slow tick retransmits), so the seven
// retransmissions take seven slow ticks, 3.5 s, and each rto is read under
// the stack lock, after the timer work that set it. Only a read forces a
// retransmission, so unless the reading goroutine is held off for a whole
// backed-off rto, each value is seen.
KTEST(lwip_port_tcp_rto_capped)
{
    enum { PORT = 7009, RETRANSMISSIONS = 7 };
    net_start();
    net_lock();
    struct tcp_pcb *l = tcp_new();
    KT_ASSERT(l);
    KT_ASSERT_EQ(tcp_bind(l, IP4_ADDR_ANY, PORT), ERR_OK);
    struct tcp_pcb *lis = tcp_listen(l);
    KT_ASSERT(lis);
    tcp_accept(lis, got_accept);
    struct tcp_pcb *c = tcp_new();
    KT_ASSERT(c);
    tcp_err(c, rto_conn_err);
    ip_addr_t lo;
    IP_ADDR4(&lo, 127, 0, 0, 1);
    accepted = 0;
    connected = rto_conn_errs = 0;
    KT_ASSERT_EQ(tcp_connect(c, &lo, PORT, got_connected), ERR_OK);
    net_unlock();
    KT_ASSERT_EQ(connected, 1);
    KT_ASSERT(accepted != 0);

    uint64_t dropped = net_hook_dropped();
    net_hook_drop_tcp_to(PORT);
    net_lock();
    KT_ASSERT_EQ(tcp_write(c, "x", 1, TCP_WRITE_FLAG_COPY), ERR_OK);
    KT_ASSERT_EQ(tcp_output(c), ERR_OK);
    int16_t base = c->rto;
    net_unlock();

    int16_t rtos[RETRANSMISSIONS + 1];     // after each retransmission; -1: not seen
    for (int i = 0; i <= RETRANSMISSIONS; i++)
        rtos[i] = -1;
    uint8_t seen = 0;
    uint32_t errs = 0;
    uint64_t moved = nanotime();
    while (seen < RETRANSMISSIONS && nanotime() - moved <= KT_STALL_NS) {
        sleep_ns(10 * 1000000);
        net_lock();
        errs = rto_conn_errs;
        if (!errs) {
            if (c->nrtx != seen) {
                seen = c->nrtx;
                rtos[seen < RETRANSMISSIONS ? seen : RETRANSMISSIONS] = c->rto;
                moved = nanotime();
            }
            c->rtime = c->rto;
        }
        net_unlock();
        if (errs)
            break;
    }

    net_lock();
    errs = rto_conn_errs;
    tcp_arg(accepted, 0);
    tcp_recv(accepted, 0);
    tcp_abort(accepted);
    if (!errs)
        tcp_abort(c);
    err_t closed = tcp_close(lis);
    net_unlock();
    net_hook_drop_tcp_to(0);
    KT_ASSERT_EQ(closed, ERR_OK);

    printf("ktest: lwip_port_tcp_rto_capped: rto in %d ms ticks, %d then:", TCP_SLOW_INTERVAL,
           base);
    for (int i = 1; i <= seen && i <= RETRANSMISSIONS; i++)
        printf(" %d", rtos[i]);
    printf(", ceiling %d\n", NET_TCP_RTO_MAX_TICKS);
    KT_ASSERT_EQ(errs, 0);
    KT_ASSERT_EQ(seen, RETRANSMISSIONS);
    KT_ASSERT(net_hook_dropped() - dropped >= RETRANSMISSIONS);
    for (int i = 1; i <= RETRANSMISSIONS; i++)
        if (rtos[i] > NET_TCP_RTO_MAX_TICKS)
            KT_FAIL("after retransmission %d rto is %d ticks, past the ceiling of %d", i, rtos[i],
                    NET_TCP_RTO_MAX_TICKS);
    KT_ASSERT_EQ(rtos[RETRANSMISSIONS], NET_TCP_RTO_MAX_TICKS);
}
