// SPDX-License-Identifier: MIT
// What the socket layer's files share (net/conn.c, net/udp.c): the
// conversions between goro's addresses and errors and lwIP's.
#ifndef GORO_NET_CONN_H
#define GORO_NET_CONN_H

#include "goro.h"
#include <lwip/err.h>
#include <lwip/ip_addr.h>

void net_addr_from_lwip(struct net_addr *a, const ip_addr_t *ip, uint16_t port);
void net_addr_to_lwip(ip_addr_t *ip, const struct net_addr *a);
// An lwIP error as the NET_E* error Go would report for it.
long net_err_from_lwip(err_t e);

#endif
