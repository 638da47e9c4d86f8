// SPDX-License-Identifier: MIT
// memcached's ASCII protocol, parsed (rules in mc_parse.h). Pure and
// freestanding. Where memcached's behaviour is an accident of its C
// library calls (strtoul, strtol), the accident is kept: a number may
// carry a leading '+', flags wrap at 2^32, a stored number may have blanks
// around it.
#include "mc_parse.h"

#include <string.h>

#define MAX_WORDS 24                    // memcached's MAX_TOKENS, its terminal token included

struct word {
    const char *s;
    uint32_t n;
};

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static bool word_is(const struct word *w, const char *lit)
{
    size_t k = strlen(lit);
    return w->n == k && !memcmp(w->s, lit, k);
}

// Splits line[0..n) at spaces into at most MAX_WORDS - 1 words; the last
// holds the rest of the line when there are more (memcached's tokenizer).
static int split(const char *line, size_t n, struct word *w)
{
    int nw = 0;
    size_t i = 0;
    while (i < n) {
        while (i < n && line[i] == ' ')
            i++;
        if (i == n)
            break;
        if (nw == MAX_WORDS - 2) {          // the rest, as one word
            size_t e = n;
            w[nw++] = (struct word){ line + i, (uint32_t)(e - i) };
            break;
        }
        size_t s = i;
        while (i < n && line[i] != ' ')
            i++;
        w[nw++] = (struct word){ line + s, (uint32_t)(i - s) };
    }
    return nw;
}

// strtoull's reading of v[0..n) as memcached's safe_strtoull takes it.
static bool parse_ull(const char *v, size_t n, uint64_t *out, bool *negative)
{
    size_t i = 0;
    *negative = false;
    while (i < n && is_space(v[i]))
        i++;
    if (i < n && (v[i] == '+' || v[i] == '-'))
        *negative = v[i++] == '-';
    size_t d = i;
    uint64_t x = 0;
    for (; i < n && v[i] >= '0' && v[i] <= '9'; i++) {
        uint64_t digit = (uint64_t)(v[i] - '0');
        if (x > (UINT64_MAX - digit) / 10)
            return false;                   // ERANGE
        x = x * 10 + digit;
    }
    if (i == d || (i < n && !is_space(v[i])))
        return false;
    *out = x;
    return true;
}

bool mc_parse_u64(const char *v, size_t n, uint64_t *out)
{
    bool neg;
    uint64_t x;
    // memcached rejects a '-' only when the result looks negative as a
    // signed number; strtoull("-0") is 0, "-5" is 2^64 - 5.
    if (!parse_ull(v, n, &x, &neg))
        return false;
    if (neg) {
        x = 0 - x;
        if ((int64_t)x < 0)
            return false;
    }
    *out = x;
    return true;
}

static bool parse_u32_wrap(const struct word *w, uint32_t *out)
{
    uint64_t x;
    if (!mc_parse_u64(w->s, w->n, &x))
        return false;
    *out = (uint32_t)x;
    return true;
}

// memcached's safe_strtol: strtol's long (64 bits), then stored in an
// int32_t, so 4294967297 reads as 1.
static bool parse_i32(const struct word *w, int32_t *out)
{
    bool neg;
    uint64_t x;
    if (!parse_ull(w->s, w->n, &x, &neg) || x > (neg ? 0x8000000000000000ull : 0x7fffffffffffffffull))
        return false;
    *out = (int32_t)(uint32_t)(neg ? 0 - x : x);
    return true;
}

// noreply is the last word of a command that takes it.
static bool noreply(const struct word *w, int nw)
{
    return nw > 1 && word_is(&w[nw - 1], "noreply");
}

bool mc_next_key(const char **p, const char *end, const char **key, uint32_t *nkey)
{
    const char *s = *p;
    while (s < end && *s == ' ')
        s++;
    if (s == end) {
        *p = s;
        return false;
    }
    const char *e = s;
    while (e < end && *e != ' ')
        e++;
    *key = s;
    *nkey = (uint32_t)(e - s);
    *p = e;
    return true;
}

#define REPLY(line)                 \
    do {                            \
        *reply = (line);            \
        return MC_REPLY;            \
    } while (0)
// An answer a noreply silences (memcached's out_string).
#define SOFT_REPLY(line) REPLY(cmd->noreply ? "" : (line))

// The data block of cmd->bytes and its CRLF after the command line of
// line_len bytes, for set and its kin and for ms. A value over MC_ITEM_MAX
// is too_large: MC_COMMAND, the block left to *swallow (the caller's
// executor answers). MC_MORE: *used bytes must be buffered to go on.
// MC_REPLY: the block is not ended by CRLF (its bytes are consumed); the
// caller answers bad data chunk, silenced by noreply or not as its command
// is. Otherwise MC_COMMAND with cmd->data set.
static enum mc_status data_block(struct mc_cmd *cmd, const char *buf, size_t len, size_t line_len, size_t *used,
                                 size_t *swallow)
{
    if ((uint64_t)cmd->nkey + cmd->bytes + 2 + MC_ITEM_OVERHEAD > MC_ITEM_MAX) {
        cmd->too_large = true;
        *used = line_len;
        *swallow = (size_t)cmd->bytes + 2;
        return MC_COMMAND;
    }
    *used = line_len + cmd->bytes + 2;
    if (len - line_len < (size_t)cmd->bytes + 2)
        return MC_MORE;
    const char *data = buf + line_len;
    if (data[cmd->bytes] != '\r' || data[cmd->bytes + 1] != '\n')
        return MC_REPLY;
    cmd->data = data;
    return MC_COMMAND;
}

static enum mc_status storage(struct mc_cmd *cmd, const struct word *w, int nw, const char *buf, size_t len,
                              size_t line_len, size_t *used, size_t *swallow, const char **reply)
{
    bool cas = cmd->kind == MC_CAS;
    if (nw != (cas ? 6 : 5) && nw != (cas ? 7 : 6))
        REPLY("ERROR\r\n");
    cmd->noreply = noreply(w, nw);
    int32_t vlen;
    if (w[1].n > MC_KEY_MAX || !parse_u32_wrap(&w[2], &cmd->flags) || !parse_i32(&w[3], &cmd->exptime) ||
        !parse_i32(&w[4], &vlen) || (cas && !mc_parse_u64(w[5].s, w[5].n, &cmd->cas)) || vlen < 0)
        SOFT_REPLY("CLIENT_ERROR bad command line format\r\n");
    cmd->key = w[1].s, cmd->nkey = w[1].n;
    cmd->bytes = (uint32_t)vlen;
    enum mc_status st = data_block(cmd, buf, len, line_len, used, swallow);
    if (st == MC_REPLY)
        SOFT_REPLY("CLIENT_ERROR bad data chunk\r\n");
    return st;
}

static enum mc_status command(struct mc_cmd *cmd, const struct word *w, int nw, const char **reply)
{
    switch (cmd->kind) {
    case MC_DELETE:
        if (nw < 2 || nw > 4)
            REPLY("ERROR\r\n");
        if (nw > 2) {
            bool hold_zero = word_is(&w[2], "0");
            cmd->noreply = noreply(w, nw);
            if (!((nw == 3 && (hold_zero || cmd->noreply)) || (nw == 4 && hold_zero && cmd->noreply)))
                SOFT_REPLY("CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n");
        }
        if (w[1].n > MC_KEY_MAX)
            SOFT_REPLY("CLIENT_ERROR bad command line format\r\n");
        break;
    case MC_INCR:
    case MC_DECR:
        if (nw != 3 && nw != 4)
            REPLY("ERROR\r\n");
        cmd->noreply = noreply(w, nw);
        if (w[1].n > MC_KEY_MAX)
            SOFT_REPLY("CLIENT_ERROR bad command line format\r\n");
        if (!mc_parse_u64(w[2].s, w[2].n, &cmd->delta))
            SOFT_REPLY("CLIENT_ERROR invalid numeric delta argument\r\n");
        break;
    case MC_TOUCH:
        if (nw != 3 && nw != 4)
            REPLY("ERROR\r\n");
        cmd->noreply = noreply(w, nw);
        if (w[1].n > MC_KEY_MAX)
            SOFT_REPLY("CLIENT_ERROR bad command line format\r\n");
        if (!parse_i32(&w[2], &cmd->exptime))
            SOFT_REPLY("CLIENT_ERROR invalid exptime argument\r\n");
        break;
    case MC_FLUSH_ALL:
        if (nw > 3)
            REPLY("ERROR\r\n");
        cmd->noreply = noreply(w, nw);
        if (nw != (cmd->noreply ? 2 : 1)) {
            if (!parse_i32(&w[1], &cmd->exptime))
                SOFT_REPLY("CLIENT_ERROR invalid exptime argument\r\n");
            cmd->has_delay = true;
        }
        return MC_COMMAND;
    case MC_VERBOSITY:
        if (nw != 2 && nw != 3)
            REPLY("ERROR\r\n");
        cmd->noreply = noreply(w, nw);
        {
            uint32_t level;
            if (!parse_u32_wrap(&w[1], &level))
                SOFT_REPLY("CLIENT_ERROR bad command line format\r\n");
        }
        return MC_COMMAND;
    case MC_STATS: {
        // Only the first argument counts (detail's: the second), as in
        // memcached. Its others (cachedump, extstore) name what kvd does
        // not keep: ERROR, memcached's answer to an unknown one.
        static const struct {
            const char *arg;
            int which;
        } args[] = { { "reset", MC_STATS_RESET }, { "settings", MC_STATS_SETTINGS }, { "items", MC_STATS_ITEMS },
                     { "slabs", MC_STATS_SLABS }, { "sizes", MC_STATS_SIZES },
                     { "conns", MC_STATS_CONNS } };
        if (nw == 1)
            return MC_COMMAND;
        if (word_is(&w[1], "detail")) {
            static const char *const sub[] = { "on", "off", "dump" };
            for (int i = 0; nw > 2 && i < 3; i++) {
                if (word_is(&w[2], sub[i])) {
                    cmd->stats = MC_STATS_DETAIL_ON + i;
                    return MC_COMMAND;
                }
            }
            REPLY("CLIENT_ERROR usage: stats detail on|off|dump\r\n");
        }
        for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
            if (word_is(&w[1], args[i].arg)) {
                cmd->stats = args[i].which;
                return MC_COMMAND;
            }
        }
        REPLY("ERROR\r\n");
    }
    case MC_SHUTDOWN:
        // memcached without -A (its default): refused, whatever follows.
        REPLY("ERROR: shutdown not enabled\r\n");
    default:
        return MC_COMMAND;
    }
    cmd->key = w[1].s, cmd->nkey = w[1].n;
    return MC_COMMAND;
}

// ---- meta commands --------------------------------------------------------------

#define META_MAX_TOKENS 20              // memcached's MFLAG_MAX_OPT_LENGTH, counting its terminal token

// memcached's _meta_flag_preparse over the flag words w[0..nw): each
// letter once, each value well formed. Returns the error line, or NULL.
// A wrong value is remembered and the scan goes on (a later one may name
// another mistake); an unknown or repeated letter ends it at once.
static const char *meta_flags(struct mc_cmd *cmd, const struct word *w, int nw)
{
    const char *err = NULL;
    cmd->delta = 1;
    for (int i = 0; i < nw; i++) {
        char c = w[i].s[0];
        struct word v = { w[i].s + 1, w[i].n - 1 };
        bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
        if ((unsigned char)c >= 127 || (letter && (cmd->mseen & MC_FLAG(c))))
            return "CLIENT_ERROR duplicate flag\r\n";
        if (!letter)
            return "CLIENT_ERROR invalid flag\r\n";
        cmd->mseen |= MC_FLAG(c);
        switch (c) {
        case 'T':
            if (!parse_i32(&v, &cmd->exptime))
                err = "CLIENT_ERROR bad token in command line format\r\n";
            break;
        case 'N':
            if (!parse_i32(&v, &cmd->vivify))
                err = "CLIENT_ERROR bad token in command line format\r\n";
            break;
        case 'R':
            if (!parse_i32(&v, &cmd->recache))
                err = "CLIENT_ERROR bad token in command line format\r\n";
            break;
        case 'C':
            if (!mc_parse_u64(v.s, v.n, &cmd->cas))
                err = "CLIENT_ERROR bad token in command line format\r\n";
            break;
        case 'F':
            if (!parse_u32_wrap(&v, &cmd->flags))
                err = "CLIENT_ERROR bad command line format\r\n";
            break;
        case 'M':
            if (w[i].n != 2)
                err = "CLIENT_ERROR incorrect length for M token\r\n";
            else
                cmd->mode = v.s[0];
            break;
        case 'J':
            if (!mc_parse_u64(v.s, v.n, &cmd->initial))
                err = "CLIENT_ERROR invalid numeric initial value\r\n";
            break;
        case 'D':
            if (!mc_parse_u64(v.s, v.n, &cmd->delta))
                err = "CLIENT_ERROR invalid numeric delta value\r\n";
            break;
        case 'O': case 'P': case 'L': case 'k': case 's': case 't': case 'c': case 'f': case 'v': case 'u':
        case 'q': case 'b': case 'h': case 'l': case 'I':
            break;
        default:
            return "CLIENT_ERROR invalid flag\r\n";
        }
    }
    return err;
}

// The value of a base64 digit, PAD for '=', SKIP for any other byte.
enum { PAD = 64, SKIP = 65 };
static unsigned b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : c == '=' ? PAD : SKIP;
}

// A b flag's key, decoded into out (room for MC_KEY_MAX bytes) as
// memcached's base64.c decodes it: bytes that are neither digits nor '='
// are skipped; the rest must come in groups of four, each '=' counting as
// a zero digit; the first group holding one or two '=' is the last, one
// or two bytes short (three or four: malformed). Its length, 0 when
// malformed (an empty key is one too).
static uint32_t b64_decode(const char *s, uint32_t n, char *out)
{
    uint32_t digits = 0, len = 0;
    for (uint32_t i = 0; i < n; i++)
        digits += b64_value((unsigned char)s[i]) != SKIP;
    if (digits == 0 || digits % 4 || digits / 4 * 3 > MC_KEY_MAX)
        return 0;
    unsigned block[4], k = 0, pad = 0;
    for (uint32_t i = 0; i < n; i++) {
        unsigned v = b64_value((unsigned char)s[i]);
        if (v == SKIP)
            continue;
        pad += v == PAD;
        block[k++] = v == PAD ? 0 : v;
        if (k < 4)
            continue;
        out[len++] = (char)(block[0] << 2 | block[1] >> 4);
        out[len++] = (char)(block[1] << 4 | block[2] >> 2);
        out[len++] = (char)(block[2] << 6 | block[3]);
        k = 0;
        if (pad) {
            if (pad > 2)
                return 0;
            len -= pad;
            break;
        }
    }
    return len;
}

static bool meta_opaque_too_long(const struct word *w, int nw)
{
    for (int i = 0; i < nw; i++)
        if (w[i].s[0] == 'O' && w[i].n > MC_OPAQUE_MAX)
            return true;
    return false;
}

// me <key> [b]: memcached's process_meta_command reads no flags but a b
// right after the key (any other word is ignored, q and a later b too),
// and answers every mistake, a key it cannot decode too, with the one
// line below.
static enum mc_status meta_debug(struct mc_cmd *cmd, const struct word *w, int nw,
                                  const char **reply)
{
    if (nw < 2 || w[1].n > MC_KEY_MAX)
        REPLY("CLIENT_ERROR bad command line format\r\n");
    cmd->key = w[1].s, cmd->nkey = w[1].n;
    if (nw > 2 && word_is(&w[2], "b")) {
        cmd->nkey = b64_decode(w[1].s, w[1].n, cmd->bkey);
        cmd->key = cmd->bkey;
        if (!cmd->nkey)
            REPLY("CLIENT_ERROR bad command line format\r\n");
    }
    return MC_COMMAND;
}

// mg, ms, md, ma and mn (me is meta_debug's), checked in memcached's order (its
// process_m*_command): an error line is always sent, q or not.
static enum mc_status meta(struct mc_cmd *cmd, const struct word *w, int nw, const char *buf, size_t len,
                           size_t line_len, size_t *used, size_t *swallow, const char **reply)
{
    if (cmd->kind == MC_MN)
        return MC_COMMAND;
    if (cmd->kind == MC_ME)
        return meta_debug(cmd, w, nw, reply);
    if (nw < 2)
        REPLY("ERROR\r\n");
    if (w[1].n > MC_KEY_MAX)
        REPLY("CLIENT_ERROR bad command line format\r\n");
    cmd->key = w[1].s, cmd->nkey = w[1].n;
    bool ms = cmd->kind == MC_MS;
    if (ms && nw == 2)
        REPLY("CLIENT_ERROR bad command line format\r\n");
    if (nw + 1 > META_MAX_TOKENS)
        REPLY(cmd->kind == MC_MG ? "CLIENT_ERROR options flags are too long\r\n"
                                 : "CLIENT_ERROR options flags too long\r\n");
    int first = ms ? 3 : 2;
    int32_t vlen = 0;
    if (ms && (!parse_i32(&w[2], &vlen) || vlen < 0 || vlen > INT32_MAX - 2))
        REPLY("CLIENT_ERROR bad command line format\r\n");
    cmd->mflags = first < nw ? w[first].s : buf + line_len;
    cmd->mflags_len = first < nw ? (uint32_t)(w[nw - 1].s + w[nw - 1].n - w[first].s) : 0;
    const char *err = meta_flags(cmd, w + first, nw - first);
    cmd->noreply = cmd->mseen & MC_FLAG('q');
    if (!err && (cmd->mseen & MC_FLAG('b'))) {
        cmd->nkey = b64_decode(w[1].s, w[1].n, cmd->bkey);
        cmd->key = cmd->bkey;
        if (!cmd->nkey)
            err = "CLIENT_ERROR error decoding key\r\n";
    }
    if (cmd->kind == MC_MD || cmd->kind == MC_MA) {
        if (err)
            REPLY("CLIENT_ERROR invalid or duplicate flag\r\n");
        if (cmd->kind == MC_MA && cmd->mode && !strchr("I+D-", cmd->mode))
            REPLY("CLIENT_ERROR invalid mode for ma M token\r\n");
        if (cmd->kind == MC_MD && meta_opaque_too_long(w + first, nw - first))
            REPLY("CLIENT_ERROR opaque token too long\r\n");
        return MC_COMMAND;              // ma's opaque is looked at after its delta, as in memcached
    }
    if (!ms) {
        if (err)
            REPLY(err);
        if (meta_opaque_too_long(w + first, nw - first))
            REPLY("CLIENT_ERROR opaque token too long\r\n");
        return MC_COMMAND;
    }
    // ms: from here on an error swallows the data block too.
    cmd->bytes = (uint32_t)vlen;
    if (!err && cmd->mode && !strchr("EAPRS", cmd->mode))
        err = "CLIENT_ERROR invalid mode for ms M token\r\n";
    if (!err && meta_opaque_too_long(w + first, nw - first))
        err = "CLIENT_ERROR opaque token too long\r\n";
    if (err) {
        *used = line_len;
        *swallow = (size_t)cmd->bytes + 2;
        REPLY(err);
    }
    // too_large is answered (and the key dropped) by mc_meta.c; an error
    // line is sent under q too.
    enum mc_status st = data_block(cmd, buf, len, line_len, used, swallow);
    if (st == MC_REPLY)
        REPLY("CLIENT_ERROR bad data chunk\r\n");
    return st;
}

static const struct {
    const char *name;
    enum mc_kind kind;
} commands[] = {
    { "get", MC_GET }, { "gets", MC_GETS }, { "set", MC_SET }, { "add", MC_ADD }, { "replace", MC_REPLACE },
    { "append", MC_APPEND }, { "prepend", MC_PREPEND }, { "cas", MC_CAS }, { "delete", MC_DELETE },
    { "incr", MC_INCR }, { "decr", MC_DECR }, { "touch", MC_TOUCH }, { "flush_all", MC_FLUSH_ALL },
    { "version", MC_VERSION }, { "stats", MC_STATS }, { "verbosity", MC_VERBOSITY }, { "quit", MC_QUIT },
    { "gat", MC_GAT }, { "gats", MC_GATS }, { "shutdown", MC_SHUTDOWN }, { "mg", MC_MG }, { "ms", MC_MS },
    { "md", MC_MD }, { "ma", MC_MA }, { "mn", MC_MN }, { "me", MC_ME },
};

// Is this line a get or gets, whose lines may be long?
static bool get_line(const char *buf, size_t len)
{
    size_t i = 0;
    while (i < len && i <= 100 && buf[i] == ' ')
        i++;
    return i <= 100 && ((len - i >= 4 && !memcmp(buf + i, "get ", 4)) || (len - i >= 5 && !memcmp(buf + i, "gets ", 5)));
}

enum mc_status mc_parse(const char *buf, size_t len, size_t scanned, struct mc_cmd *cmd, size_t *used,
                        size_t *swallow, const char **reply)
{
    memset(cmd, 0, sizeof *cmd);
    *used = *swallow = 0;
    *reply = "";
    size_t scan = len < MC_GET_LINE_MAX ? len : MC_GET_LINE_MAX, lf = scanned < scan ? scanned : scan;
    while (lf < scan && buf[lf] != '\n')
        lf++;
    if (lf == scan) {
        if (len >= MC_GET_LINE_MAX || (len > MC_LINE_MAX && !get_line(buf, len)))
            return MC_CLOSE;            // memcached: "this _has_ to be a large multiget"
        return MC_MORE;                 // *used 0: the line is incomplete
    }
    size_t line_len = lf + 1, n = lf > 0 && buf[lf - 1] == '\r' ? lf - 1 : lf;
    *used = line_len;
    struct word w[MAX_WORDS];
    int nw = split(buf, n, w);
    if (nw == 0)
        REPLY("ERROR\r\n");
    size_t k = 0, nc = sizeof commands / sizeof commands[0];
    while (k < nc && !word_is(&w[0], commands[k].name))
        k++;
    if (k == nc) {
        // memcached answers words starting like its common commands ERROR
        // before it looks for an HTTP request, which it hangs up on.
        if (!strchr("gsacidtm", w[0].s[0]) && nw >= 2 && w[nw - 1].n >= 5 && !memcmp(w[nw - 1].s, "HTTP/", 5))
            return MC_CLOSE;
        REPLY("ERROR\r\n");
    }
    cmd->kind = commands[k].kind;
    if (mc_is_storage(cmd->kind))
        return storage(cmd, w, nw, buf, len, line_len, used, swallow, reply);
    if (cmd->kind >= MC_MG)
        return meta(cmd, w, nw, buf, len, line_len, used, swallow, reply);
    bool touch = cmd->kind == MC_GAT || cmd->kind == MC_GATS;
    if (cmd->kind != MC_GET && cmd->kind != MC_GETS && !touch)
        return command(cmd, w, nw, reply);
    if (nw < 2)
        REPLY("ERROR\r\n");
    // gat/gats: the exptime, then the keys, perhaps none (memcached
    // answers END to "gat 10"); "noreply" is a key there, as in get.
    if (touch && !parse_i32(&w[1], &cmd->exptime))
        REPLY("CLIENT_ERROR invalid exptime argument\r\n");
    const char *first = touch ? (nw > 2 ? w[2].s : buf + n) : w[1].s;
    cmd->keys = first;
    cmd->keys_len = (uint32_t)(buf + n - first);
    const char *p = cmd->keys, *end = p + cmd->keys_len, *key;
    uint32_t nkey;
    while (mc_next_key(&p, end, &key, &nkey))
        if (nkey > MC_KEY_MAX)
            REPLY("CLIENT_ERROR bad command line format\r\n");
    return MC_COMMAND;
}
