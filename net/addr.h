// SPDX-License-Identifier: MIT
// Network names and addresses in Go's spelling (net/addr.c): pure, shared
// by the socket layer and the host tests. struct net_addr and the NET_E*
// errors are the public ones of goro.h.
#ifndef GORO_NET_ADDR_H
#define GORO_NET_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "goro.h"

enum net_kind { NET_KIND_TCP, NET_KIND_UDP };

// "tcp", "tcp4" -> TCP; "udp", "udp4" -> UDP; false for anything else.
bool net_network_parse(const char *network, enum net_kind *kind);
// "host:port" (host: an IPv4 literal, "localhost", or empty: 0.0.0.0 for
// a listener, 127.0.0.1 for a dialer), into *out. 0 or NET_EADDR.
int net_addr_parse(const char *address, bool listen, struct net_addr *out);

#endif
