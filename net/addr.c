// SPDX-License-Identifier: MIT
// Network names and addresses, as Go's net package spells them: the
// network ("tcp", "tcp4", "udp", "udp4"), "host:port" with an IPv4
// literal, "localhost" or nothing for the host, and the errors' text.
// Pure: no lwIP, no kernel, so that tests/host/test_netaddr.c and the
// fuzz harness compile it on the host.
#include "net/addr.h"
#include "lib/string.h"

bool net_network_parse(const char *network, enum net_kind *kind)
{
    if (!network)
        return false;
    if (!strcmp(network, "tcp") || !strcmp(network, "tcp4")) {
        *kind = NET_KIND_TCP;
        return true;
    }
    if (!strcmp(network, "udp") || !strcmp(network, "udp4")) {
        *kind = NET_KIND_UDP;
        return true;
    }
    return false;
}

// A decimal number of at most max, every character a digit; false for
// an empty or longer one.
static bool parse_dec(const char *s, size_t n, uint32_t max, uint32_t *out)
{
    if (n == 0 || n > 10)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > max)
        return false;
    *out = (uint32_t)v;
    return true;
}

// Four decimal parts of at most 255, as Go's parseIPv4 (no leading zeros
// beyond a lone 0, no empty part).
static bool parse_ipv4(const char *s, size_t n, uint8_t ip[4])
{
    size_t i = 0;
    for (int part = 0; part < 4; part++) {
        size_t start = i;
        while (i < n && s[i] != '.')
            i++;
        uint32_t v;
        if (i - start > 1 && s[start] == '0')
            return false;
        if (!parse_dec(s + start, i - start, 255, &v))
            return false;
        ip[part] = (uint8_t)v;
        if (part < 3) {
            if (i >= n)
                return false;
            i++;            // the dot
        }
    }
    return i == n;
}

int net_addr_parse(const char *address, bool listen, struct net_addr *out)
{
    if (!address)
        return NET_EADDR;
    size_t len = strlen(address);
    const char *colon = 0;
    for (size_t i = 0; i < len; i++)
        if (address[i] == ':')
            colon = address + i;
    if (!colon)
        return NET_EADDR;       // Go: "missing port in address"
    size_t hlen = (size_t)(colon - address);
    const char *port = colon + 1;
    uint32_t p;
    if (!parse_dec(port, strlen(port), 65535, &p))
        return NET_EADDR;       // Go: "invalid port" / "unknown port"
    out->port = (uint16_t)p;
    if (hlen == 0) {
        // Go: the local system; a listener takes every address.
        static const uint8_t any[4] = { 0, 0, 0, 0 }, lo[4] = { 127, 0, 0, 1 };
        memcpy(out->ip, listen ? any : lo, 4);
        return 0;
    }
    if (hlen == 9 && !strncmp(address, "localhost", 9)) {
        static const uint8_t lo[4] = { 127, 0, 0, 1 };
        memcpy(out->ip, lo, 4);
        return 0;
    }
    if (!parse_ipv4(address, hlen, out->ip))
        return NET_EADDR;       // Go: "no such host" (names are not resolved here)
    return 0;
}

static size_t put_dec(char *buf, size_t cap, size_t at, uint32_t v)
{
    char tmp[10];
    size_t n = 0;
    do
        tmp[n++] = (char)('0' + v % 10);
    while ((v /= 10) && n < sizeof tmp);
    while (n--)
        if (at + 1 < cap)
            buf[at++] = tmp[n];
    return at;
}

size_t net_addr_string(const struct net_addr *a, char *buf, size_t cap)
{
    size_t at = 0;
    if (!cap)
        return 0;
    for (int i = 0; i < 4; i++) {
        at = put_dec(buf, cap, at, a->ip[i]);
        if (at + 1 < cap)
            buf[at++] = i < 3 ? '.' : ':';
    }
    at = put_dec(buf, cap, at, a->port);
    buf[at] = 0;
    return at;
}

const char *net_error(long err)
{
    switch (err) {
    case 0: return "<nil>";
    case NET_EOF: return "EOF";
    case NET_ETIMEOUT: return "i/o timeout";
    case NET_ECLOSED: return "use of closed network connection";
    case NET_ECONNREFUSED: return "connection refused";
    case NET_ECONNRESET: return "connection reset by peer";
    case NET_EPIPE: return "broken pipe";
    case NET_EADDRINUSE: return "address already in use";
    case NET_EADDR: return "invalid address (want host:port, host an IPv4 literal, localhost or empty)";
    case NET_ENETWORK: return "unknown network (want tcp, tcp4, udp or udp4)";
    case NET_ENOBUFS: return "no buffer space available";
    case NET_EUNREACH: return "network is unreachable";
    case NET_EMSGSIZE: return "message too long";
    case NET_ETIMEDOUT: return "connection timed out";
    case NET_ENOTCONN: return "socket is not connected";
    }
    return "unknown network error";
}

bool net_timeout(long err)
{
    return err == NET_ETIMEOUT || err == NET_ETIMEDOUT;
}
