// SPDX-License-Identifier: MIT
// app=netecho [port=N] [conns=N]: TCP and UDP echo (RFC 862) on port N
// (default 7), every address. Each TCP connection gets a goroutine that
// writes back what it reads until the peer closes; each UDP datagram goes
// back to its sender. conns=N exits 0 once N TCP connections have ended
// (a test's bound); without it the server runs until the machine stops.
#include "goro.h"

#define NETECHO_BUF 16384

static waitgroup_t conns_done;

static void echo_conn(void *arg)
{
    net_conn_t *c = arg;
    char *buf = malloc(NETECHO_BUF);
    long n = buf ? 0 : NET_ENOBUFS;
    while (buf && (n = conn_read(c, buf, NETECHO_BUF)) > 0) {
        long w = conn_write(c, buf, (size_t)n);
        if (w < 0) {
            n = w;
            break;
        }
    }
    if (n != NET_EOF)
        printf("netecho: connection ended: %s\n", net_error(n));
    free(buf);
    conn_free(c);
    wg_done(&conns_done);
}

static void echo_udp(void *arg)
{
    net_pconn_t *pc = arg;
    static char buf[65536];
    struct net_addr from;
    long n;
    while ((n = pconn_read_from(pc, buf, sizeof buf, &from)) >= 0)
        pconn_write_to(pc, buf, (size_t)n, &from);
    printf("netecho: udp ended: %s\n", net_error(n));
}

static long number_arg(const char *s)
{
    long v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > 100000000)
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v;
}

static int netecho_main(int argc, char **argv)
{
    long port = 7, conns = -1;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "port=", 5) && (port = number_arg(argv[i] + 5)) >= 0 && port < 65536)
            continue;
        if (!strncmp(argv[i], "conns=", 6) && (conns = number_arg(argv[i] + 6)) >= 0)
            continue;
        printf("netecho: bad argument \"%s\" (accepted: port=0..65535, conns=N)\n", argv[i]);
        return 2;
    }
    char addr[16];
    snprintf(addr, sizeof addr, ":%ld", port);
    net_listener_t *l;
    net_pconn_t *pc;
    int err = net_listen("tcp", addr, &l);
    if (err) {
        printf("netecho: listen tcp %s: %s\n", addr, net_error(err));
        return 1;
    }
    err = net_listen_packet("udp", addr, &pc);
    if (err) {
        printf("netecho: listen udp %s: %s\n", addr, net_error(err));
        return 1;
    }
    go(echo_udp, pc);
    printf("netecho: tcp and udp echo on port %ld\n", port);
    for (long served = 0; conns < 0 || served < conns; served++) {
        net_conn_t *c;
        err = listener_accept(l, &c);
        if (err) {
            printf("netecho: accept: %s\n", net_error(err));
            return 1;
        }
        wg_add(&conns_done, 1);
        go(echo_conn, c);
    }
    wg_wait(&conns_done);
    printf("netecho: %ld connections served\n", conns);
    listener_free(l);
    pconn_free(pc);
    return 0;
}
GORO_APP(netecho, "TCP and UDP echo on port 7 (port=N, conns=N: exit after N connections)", netecho_main);
