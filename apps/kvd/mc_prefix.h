// SPDX-License-Identifier: MIT
// memcached's "stats detail": gets, hits, sets and deletes counted by key
// prefix (a key's bytes before its first ':', memcached's default -D),
// while "stats detail on" is in force; "stats detail dump" lists them.
// Keys without a ':' are not counted; past MC_PREFIX_MAX prefixes a new
// one is not counted either (memcached keeps every prefix; kvd's memory
// must stay bounded whatever clients send). Any goroutine; one lock.
#ifndef KVD_MC_PREFIX_H
#define KVD_MC_PREFIX_H

#include <stdbool.h>
#include <stdint.h>

#define MC_PREFIX_MAX 1024u

struct mc_prefixes;
struct mc_out;

struct mc_prefixes *mc_prefixes_create(void);
void mc_prefixes_destroy(struct mc_prefixes *p);
// "stats detail on" / "off".
void mc_prefixes_enable(struct mc_prefixes *p, bool on);
// A get or gets of key (hit: found), a storage command, a delete; counted
// only while enabled.
void mc_prefix_get(struct mc_prefixes *p, const char *key, uint32_t nkey, bool hit);
void mc_prefix_set(struct mc_prefixes *p, const char *key, uint32_t nkey);
void mc_prefix_delete(struct mc_prefixes *p, const char *key, uint32_t nkey);
// memcached's dump lines, "PREFIX <prefix> get N hit N set N del N", in
// the order the prefixes were first seen ("END" is the caller's).
void mc_prefixes_dump(struct mc_prefixes *p, struct mc_out *out);
// "stats reset": every count gone.
void mc_prefixes_clear(struct mc_prefixes *p);

#endif
