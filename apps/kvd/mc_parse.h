// SPDX-License-Identifier: MIT
// memcached's ASCII protocol (its doc/protocol.txt), parsed as memcached
// 1.6 parses it: the same commands, the same error lines for the same
// mistakes. Pure and freestanding: it runs in kvd, the host tests and the
// fuzzer.
//
// A command is a line of words split by spaces (runs of spaces count as
// one; a tab is part of a word), ended by LF or CRLF. Storage commands
// (set, add, replace, append, prepend, cas) are followed by a data block
// of exactly the announced length and CRLF. What memcached 1.6.18 answers,
// and so does this parser (tests/host/test_kvd.c replays its transcripts):
//   ERROR                                 an unknown command, or the wrong
//                                         number of words for a known one
//   CLIENT_ERROR bad command line format  a key over 250 bytes, a number
//                                         that is not one, a negative length
//   CLIENT_ERROR bad data chunk           a data block not ended by CRLF
//                                         (its announced length is consumed)
//   CLIENT_ERROR invalid exptime argument touch, flush_all
//   CLIENT_ERROR invalid numeric delta argument   incr, decr
//   SERVER_ERROR object too large for cache       the data block is
//                                         swallowed; a set removes the key
// The meta commands (mg, ms, md, ma, mn, me) answer their own error lines,
// memcached's (mc_meta.c lists the flags kvd takes).
// A non-get line of over 2048 bytes without its LF, and a line holding an
// HTTP request, close the connection at once, as in memcached (answers
// still unsent are dropped; quit sends them first); get and gets lines
// may be longer (MC_GET_LINE_MAX here, unbounded there). memcached drops
// the answers it has not yet sent when a get's key is too long; kvd sends
// them. noreply, the last
// word of a command that takes it, silences its answer, errors included
// (memcached's out_string), except SERVER_ERROR out of memory.
#ifndef KVD_MC_PARSE_H
#define KVD_MC_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MC_KEY_MAX 250u
#define MC_LINE_MAX 2048u               // a line other than get/gets, before its LF is seen
#define MC_GET_LINE_MAX 65536u          // a get/gets line
// An item (key, value, and memcached's per-item overhead) is at most 1 MiB,
// memcached's default item_size_max: a 3-byte key takes values up to
// 1048510 bytes there, 1048507 here.
#define MC_ITEM_MAX (1u << 20)
#define MC_ITEM_OVERHEAD 64u
// memcached's REALTIME_MAXDELTA: an exptime above it is a Unix time.
#define MC_REALTIME_MAXDELTA (60 * 60 * 24 * 30)

enum mc_kind {
    MC_GET, MC_GETS, MC_SET, MC_ADD, MC_REPLACE, MC_APPEND, MC_PREPEND, MC_CAS, MC_DELETE, MC_INCR,
    MC_DECR, MC_TOUCH, MC_FLUSH_ALL, MC_VERSION, MC_STATS, MC_VERBOSITY, MC_QUIT, MC_GAT, MC_GATS, MC_SHUTDOWN,
    MC_MG, MC_MS, MC_MD, MC_MA, MC_MN, MC_ME,  // the meta commands (mc_meta.c)
};

// A meta command's flag letter c was given.
#define MC_FLAG(c) (1ull << ((c) - 'A'))
#define MC_OPAQUE_MAX 32u               // an O word's bytes, its O included

// The storage commands: a data block follows their line.
static inline bool mc_is_storage(enum mc_kind k)
{
    return k >= MC_SET && k <= MC_CAS;
}

struct mc_cmd {
    enum mc_kind kind;
    bool noreply;
    bool too_large;                     // storage: the value is over MC_ITEM_MAX (swallowed)
    const char *key;                    // one-key commands
    uint32_t nkey;
    const char *keys;                   // get/gets/gat/gats: the keys (mc_next_key)
    uint32_t keys_len;
    uint32_t flags;                     // storage
    int32_t exptime;                    // storage, touch, gat/gats; flush_all's delay
    bool has_delay;                     // flush_all
    uint32_t bytes;                     // storage: the value's length
    const char *data;                   // storage: the value (bytes long), in the caller's buffer
    uint64_t cas;                       // cas
    uint64_t delta;                     // incr, decr
    // Meta commands: their flag words as sent (mc_next_key walks them),
    // the letters given (MC_FLAG), and the flags' values: F in flags, T in
    // exptime, C in cas, D in delta (1 when absent), datalen in bytes.
    const char *mflags;
    uint32_t mflags_len;
    uint64_t mseen;
    int32_t vivify;                     // N (mg, ma)
    int32_t recache;                    // R (mg)
    char bkey[MC_KEY_MAX];              // b: the key decoded from base64 (key points here)
    uint64_t initial;                   // J (ma)
    char mode;                          // M's letter (ms, ma), 0 when absent
    enum { MC_STATS_GENERAL, MC_STATS_RESET, MC_STATS_SETTINGS, MC_STATS_ITEMS, MC_STATS_SLABS,
           MC_STATS_SIZES, MC_STATS_DETAIL_ON, MC_STATS_DETAIL_OFF, MC_STATS_DETAIL_DUMP,
           MC_STATS_CONNS } stats;  // stats' argument
};

enum mc_status {
    MC_MORE,                            // read more: a line (*used 0), or *used bytes for a data block
    MC_COMMAND,                         // *cmd is a command of *used bytes; then skip *swallow more
    MC_REPLY,                           // send *reply (a whole line, or "" under noreply) for *used bytes
    MC_CLOSE,                           // hang up at once, answers not yet sent dropped (memcached's conn_closing)
};

// Parses the command at buf[0..len), whose first `scanned` bytes are
// known to hold no LF (the caller's earlier MC_MORE: a line trickling in is
// searched once, not once per read). With MC_COMMAND and MC_REPLY, *used
// bytes are consumed; *swallow more bytes (a too-large value and its CRLF,
// perhaps not received yet) must be discarded after them.
enum mc_status mc_parse(const char *buf, size_t len, size_t scanned, struct mc_cmd *cmd, size_t *used,
                        size_t *swallow, const char **reply);

// The next key of a get/gets list at *p (before end): true with key and
// nkey, *p moved past it; false at the end of the list.
bool mc_next_key(const char **p, const char *end, const char **key, uint32_t *nkey);

// memcached's safe_strtoull on v[0..n): digits, then only spaces (a stored
// number may carry them, after a decr done in place). false for anything
// else, a '-', or a value over 2^64 - 1.
bool mc_parse_u64(const char *v, size_t n, uint64_t *out);

#endif
