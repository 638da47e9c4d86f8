// SPDX-License-Identifier: MIT
// The kernel command line parser (rules in cmdline.h). Pure and
// freestanding: no libc, no kernel calls, so the same file runs in the
// kernel and under the host unit tests. Warnings are formatted here into a
// local buffer and handed to the caller's warn function.
//
// The line is copied into p->buf and split in place: separators become
// NULs, and the app's argv points at the words. Every bad word produces
// exactly one warning; a line longer than the buffer, or an app with too
// many arguments, produces one more each.
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/cmdline.h"

#define NS_PER_US 1000ull
#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

#define QUANTUM_DEFAULT_NS (10 * NS_PER_MS)
#define SCHEDTRACE_MIN_NS NS_PER_MS
#define SCHEDTRACE_MAX_NS (60 * NS_PER_S)
#define PROFILE_MIN_HZ 100
#define PROFILE_MAX_HZ 10000
#define INIT_DELAY_MAX_NS (100 * NS_PER_MS)
#define AP_TIMEOUT_DEFAULT_NS (2 * NS_PER_S)
#define AP_TIMEOUT_MAX_NS (10 * NS_PER_S)

// ---- small string helpers ------------------------------------------------

static bool str_eq(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

// True when the first n bytes of a equal the whole of b.
static bool str_eq_n(const char *a, size_t n, const char *b)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != a[i] || b[i] == '\0')
            return false;
    return b[n] == '\0';
}

static size_t str_len(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

static bool is_sep(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int hex_value(char c)
{
    if (is_digit(c))
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

// ---- numbers and durations -----------------------------------------------

// Parses the leading decimal digits of s into *out; returns the first byte
// after them, or NULL when there are none or the number overflows.
static const char *parse_decimal(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    const char *start = s;
    for (; is_digit(*s); s++) {
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return NULL;
        v = v * 10 + d;
    }
    if (s == start)
        return NULL;
    *out = v;
    return s;
}

static bool parse_u64(const char *s, uint64_t *out)
{
    const char *end = parse_decimal(s, out);
    return end && *end == '\0';
}

// Decimal, or hexadecimal after "0x"/"0X"; the whole string must be a number.
static bool parse_u64_or_hex(const char *s, uint64_t *out)
{
    if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
        return parse_u64(s, out);
    s += 2;
    if (*s == '\0')
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        int d = hex_value(*s);
        if (d < 0 || v >> 60)
            return false;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return true;
}

// Runs before the first STARTUP (kmain), where under TCG every basic block
// run costs its translation: the comparison runs only where a word's first
// letter matches, so a line without such a word runs a few blocks, not 11.
// The first word of line that starts with prefix, from the character
// after the prefix; NULL if there is none. Inlined: cmdline_has_word runs
// before the APs' start, on the boot's first page (boot/text_order.txt),
// cmdline_word_number only for a word that is there.
static inline __attribute__((always_inline)) const char *word_after(const char *line, const char *prefix)
{
    bool start = true;                          // w begins a word
    for (const char *w = line; *w; w++) {
        if (start && *w == prefix[0]) {
            size_t i = 1;
            while (prefix[i] && w[i] == prefix[i])
                i++;
            if (!prefix[i])
                return w + i;
        }
        start = is_sep(*w);
    }
    return NULL;
}

bool cmdline_has_word(const char *line, const char *prefix)
{
    return word_after(line, prefix) != NULL;
}

bool cmdline_word_number(const char *line, const char *prefix, uint64_t *out)
{
    const char *v = word_after(line, prefix);
    const char *end = v ? parse_decimal(v, out) : NULL;
    return end && (*end == '\0' || is_sep(*end));
}

bool cmdline_duration(const char *s, uint64_t default_unit_ns, uint64_t *out_ns)
{
    uint64_t n, unit;
    const char *u = parse_decimal(s, &n);
    if (!u)
        return false;
    if (*u == '\0')
        unit = default_unit_ns;
    else if (str_eq(u, "us"))
        unit = NS_PER_US;
    else if (str_eq(u, "ms"))
        unit = NS_PER_MS;
    else if (str_eq(u, "s"))
        unit = NS_PER_S;
    else
        return false;
    if (unit == 0 || n > UINT64_MAX / unit)
        return false;
    *out_ns = n * unit;
    return true;
}

// ---- the keys ------------------------------------------------------------

// Why a value was rejected; each has its own wording in the warning.
enum verdict { V_OK, V_MALFORMED, V_RANGE, V_NEEDS_UNIT };

struct key {
    const char *name;
    enum verdict (*set)(struct kparams *p, const char *val);
    const char *accepts;    // the range or choices, shown in warnings
    const char *dflt;       // the default, shown in warnings
};

static enum verdict set_app(struct kparams *p, const char *val)
{
    size_t n = str_len(val);
    if (n >= sizeof p->app)
        return V_MALFORMED;
    for (size_t i = 0; i <= n; i++)
        p->app[i] = val[i];
    return V_OK;
}

static enum verdict set_gomaxprocs(struct kparams *p, const char *val)
{
    uint64_t v;
    if (!parse_u64(val, &v))
        return V_MALFORMED;
    if (v < 1 || v > CMDLINE_GOMAXPROCS_MAX)
        return V_RANGE;
    p->gomaxprocs = (int)v;
    return V_OK;
}

// A duration that must carry its unit ("10" could mean any of them), in
// [min, max].
static enum verdict duration_with_unit(const char *val, uint64_t min, uint64_t max, uint64_t *ns)
{
    if (!cmdline_duration(val, 0, ns)) {
        uint64_t v;
        return parse_u64(val, &v) ? V_NEEDS_UNIT : V_MALFORMED;
    }
    return *ns < min || *ns > max ? V_RANGE : V_OK;
}

static enum verdict set_quantum(struct kparams *p, const char *val)
{
    uint64_t ns;
    enum verdict v = duration_with_unit(val, QUANTUM_MIN_NS, QUANTUM_MAX_NS, &ns);
    if (v == V_OK)
        p->quantum_ns = ns;
    return v;
}

// Go's schedtrace=X is in milliseconds, so a bare number is too.
static enum verdict set_schedtrace(struct kparams *p, const char *val)
{
    uint64_t ns;
    if (!cmdline_duration(val, NS_PER_MS, &ns))
        return V_MALFORMED;
    if (ns != 0 && (ns < SCHEDTRACE_MIN_NS || ns > SCHEDTRACE_MAX_NS))
        return V_RANGE;
    p->schedtrace_ns = ns;
    return V_OK;
}

// Returns the index of val in choices (a NULL-terminated list), or -1.
static int choice(const char *val, const char *const *choices)
{
    for (int i = 0; choices[i]; i++)
        if (str_eq(val, choices[i]))
            return i;
    return -1;
}

static enum verdict set_flag01(bool *flag, const char *val)
{
    static const char *const c[] = { "0", "1", NULL };
    int i = choice(val, c);
    if (i < 0)
        return V_MALFORMED;
    *flag = i == 1;
    return V_OK;
}

static enum verdict set_scheddetail(struct kparams *p, const char *val)
{
    return set_flag01(&p->scheddetail, val);
}

static enum verdict set_trace(struct kparams *p, const char *val)
{
    return set_flag01(&p->trace, val);
}

static enum verdict set_profile(struct kparams *p, const char *val)
{
    uint64_t v;
    if (!parse_u64(val, &v))
        return V_MALFORMED;
    if (v != 0 && (v < PROFILE_MIN_HZ || v > PROFILE_MAX_HZ))
        return V_RANGE;
    p->profile_hz = (uint32_t)v;
    return V_OK;
}

static enum verdict set_metrics(struct kparams *p, const char *val)
{
    return set_flag01(&p->metrics, val);
}

static enum verdict set_steal(struct kparams *p, const char *val)
{
    static const char *const c[] = { "numa", "flat", NULL };
    static const enum steal_policy v[] = { STEAL_NUMA, STEAL_FLAT };
    int i = choice(val, c);
    if (i < 0)
        return V_MALFORMED;
    p->steal = v[i];
    return V_OK;
}

static enum verdict set_idle(struct kparams *p, const char *val)
{
    static const char *const c[] = { "hlt", "mwait", "poll", NULL };
    static const enum idle_policy v[] = { IDLE_HLT, IDLE_MWAIT, IDLE_POLL };
    int i = choice(val, c);
    if (i < 0)
        return V_MALFORMED;
    p->idle = v[i];
    return V_OK;
}

static enum verdict set_numa(struct kparams *p, const char *val)
{
    static const char *const c[] = { "on", "1", "off", "0", NULL };
    int i = choice(val, c);
    if (i < 0)
        return V_MALFORMED;
    p->numa = i < 2;
    return V_OK;
}

static enum verdict set_seed(struct kparams *p, const char *val)
{
    uint64_t v;
    if (!parse_u64_or_hex(val, &v))
        return V_MALFORMED;
    p->seed = v;
    p->seed_given = true;
    return V_OK;
}

// The shell's boot script (shell/shell_script.c splits it): any text; the
// value stays in p->buf, where the words live.
static enum verdict set_script(struct kparams *p, const char *val)
{
    p->script = val;
    return V_OK;
}

static enum verdict set_simd(struct kparams *p, const char *val)
{
    static const char *const c[] = { "on", "off", NULL };
    int i = choice(val, c);
    if (i < 0)
        return V_MALFORMED;
    p->simd = i == 0;
    return V_OK;
}

static enum verdict set_nic_irq(struct kparams *p, const char *val)
{
    static const char *const c[] = { "none", "intx", "msi", "msix", NULL };
    int i = choice(val, c);
    if (i < 0)
        return V_MALFORMED;
    p->nic_irq = (enum nic_irq)i;
    return V_OK;
}

// An IPv4 address "A.B.C.D" (each 0..255) at s, as a host-order number;
// returns the rest of s, or NULL when s does not start with one.
static const char *parse_ipv4(const char *s, uint32_t *out)
{
    uint32_t a = 0;
    for (int i = 0; i < 4; i++) {
        uint64_t b;
        const char *end = parse_decimal(s, &b);
        if (!end || end == s || b > 255 || (i < 3 && *end != '.'))
            return 0;
        a = a << 8 | (uint32_t)b;
        s = i < 3 ? end + 1 : end;
    }
    *out = a;
    return s;
}

// ip=A.B.C.D/N: the first NIC's static address (no DHCP), N 1..32.
static enum verdict set_ip(struct kparams *p, const char *val)
{
    uint32_t a;
    uint64_t n;
    const char *rest = parse_ipv4(val, &a);
    if (!rest || *rest != '/' || !parse_u64(rest + 1, &n))
        return V_MALFORMED;
    if (n < 1 || n > 32 || a == 0)
        return V_RANGE;
    p->ip_addr = a;
    p->ip_prefix = (uint8_t)n;
    return V_OK;
}

// gw=A.B.C.D: the static address's gateway.
static enum verdict set_gw(struct kparams *p, const char *val)
{
    uint32_t a;
    const char *rest = parse_ipv4(val, &a);
    if (!rest || *rest)
        return V_MALFORMED;
    p->ip_gw = a;
    return V_OK;
}

// delay=NAME:US[,NAME:US...]: names of [a-z0-9_], US up to a second. All
// or nothing: one bad pair rejects the word.
static enum verdict set_delay(struct kparams *p, const char *val)
{
    struct cmdline_delay d[CMDLINE_DELAYS_MAX];
    int n = 0;
    for (const char *s = val;; s++) {
        if (n == CMDLINE_DELAYS_MAX)
            return V_RANGE;
        size_t len = 0;
        while ((s[len] >= 'a' && s[len] <= 'z') || is_digit(s[len]) || s[len] == '_')
            len++;
        if (len == 0 || len >= CMDLINE_DELAY_NAME_MAX || s[len] != ':')
            return V_MALFORMED;
        for (size_t i = 0; i < len; i++)
            d[n].name[i] = s[i];
        d[n].name[len] = '\0';
        uint64_t us;
        const char *end = parse_decimal(s + len + 1, &us);
        if (!end || (*end != '\0' && *end != ','))
            return V_MALFORMED;
        if (us > CMDLINE_DELAY_US_MAX)
            return V_RANGE;
        d[n++].us = (uint32_t)us;
        s = end;
        if (*s == '\0')
            break;
    }
    for (int i = 0; i < n; i++)
        p->delays[i] = d[i];
    p->ndelays = n;
    return V_OK;
}

// ap-silent[:APICID], acpi:SIG (MADT and FADT stand for APIC and FACP),
// node-full[:N], stack-full, tickets:N (N >= 1), evict:S (S >= 2; the
// boot ignores one of MAX_CPUS or more).
static enum verdict set_inject(struct kparams *p, const char *val)
{
    static const char *const names[] = { "ap-silent", "acpi", "node-full", "stack-full", "tickets", "evict",
                                         NULL };
    static const enum inject_fault kinds[] = { INJECT_AP_SILENT, INJECT_ACPI, INJECT_NODE_FULL,
                                               INJECT_STACK_FULL, INJECT_TICKETS, INJECT_EVICT };
    size_t n = 0;
    while (val[n] && val[n] != ':')
        n++;
    int i = -1;
    for (int k = 0; names[k] && i < 0; k++)
        if (str_eq_n(val, n, names[k]))
            i = k;
    if (i < 0)
        return V_MALFORMED;
    const char *arg = val[n] ? val + n + 1 : NULL;
    uint64_t num = kinds[i] == INJECT_AP_SILENT ? 1 : 0;
    char sig[5] = { 0 };
    switch (kinds[i]) {
    case INJECT_AP_SILENT:
    case INJECT_NODE_FULL:
        if (arg && (!parse_u64(arg, &num) || num > UINT32_MAX))
            return V_MALFORMED;
        break;
    case INJECT_TICKETS:
        if (!arg || !parse_u64(arg, &num) || num < 1 || num > UINT32_MAX)
            return V_MALFORMED;
        break;
    case INJECT_EVICT:
        if (!arg || !parse_u64(arg, &num) || num < 2 || num > UINT32_MAX)
            return V_MALFORMED;
        break;
    case INJECT_ACPI:
        if (!arg)
            return V_MALFORMED;
        if (str_eq(arg, "MADT"))
            arg = "APIC";
        else if (str_eq(arg, "FADT"))
            arg = "FACP";
        if (str_len(arg) != 4)
            return V_MALFORMED;
        for (int k = 0; k < 4; k++)
            sig[k] = arg[k];
        break;
    default:
        if (arg)
            return V_MALFORMED;
        break;
    }
    p->inject = kinds[i];
    p->inject_arg = (uint32_t)num;
    for (int k = 0; k < 5; k++)
        p->inject_sig[k] = sig[k];
    return V_OK;
}

static enum verdict set_boot_timeline(struct kparams *p, const char *val)
{
    return set_flag01(&p->boot_timeline, val);
}

// The wait between INIT and STARTUP: "auto" decides by CPU (none on CPUs
// that do not need it), a duration forces it, for old hardware.
static enum verdict set_init_delay(struct kparams *p, const char *val)
{
    if (str_eq(val, "auto")) {
        p->init_delay_ns = INIT_DELAY_AUTO;
        return V_OK;
    }
    uint64_t ns = 0;            // "0": no wait, which needs no unit
    enum verdict v = str_eq(val, "0") ? V_OK : duration_with_unit(val, 0, INIT_DELAY_MAX_NS, &ns);
    if (v == V_OK)
        p->init_delay_ns = ns;
    return v;
}

// How long the boot core waits for the APs. Short values make cores late
// on purpose: the matrix's late-aps configuration tests what happens then.
static enum verdict set_ap_timeout(struct kparams *p, const char *val)
{
    uint64_t ns;
    enum verdict v = duration_with_unit(val, 1000, AP_TIMEOUT_MAX_NS, &ns);
    if (v == V_OK)
        p->ap_timeout_ns = ns;
    return v;
}

static const struct key keys[] = {
    { "app", set_app, "a name of 1..31 characters", "no app" },
    { "gomaxprocs", set_gomaxprocs, "1..1024", "one per core" },
    { "quantum", set_quantum, "20us..1s, with a unit: us, ms or s", "10ms" },
    { "schedtrace", set_schedtrace, "0 (off) or 1ms..60s; a bare number is ms", "off" },
    { "scheddetail", set_scheddetail, "0 or 1", "0" },
    { "trace", set_trace, "0 or 1", "0" },
    { "profile", set_profile, "0 (off) or 100..10000 samples per second per core", "0" },
    { "metrics", set_metrics, "0 or 1", "0" },
    { "steal", set_steal, "numa or flat", "numa" },
    { "idle", set_idle, "hlt, mwait or poll", "hlt" },
    { "numa", set_numa, "on, off, 1 or 0", "on" },
    { "seed", set_seed, "a decimal or 0x-hex 64-bit number", "no fixed seed" },
    { "simd", set_simd, "on or off", "on" },
    { "delay", set_delay, "NAME:US[,NAME:US...], up to 8, US <= 1000000", "none" },
    { "inject", set_inject, "ap-silent[:APICID], acpi:SIG, node-full[:NODE], stack-full, tickets:N or evict:S",
      "none" },
    { "script", set_script, "shell commands separated by ';', quoted when they have spaces",
      "no script" },
    { "boot_timeline", set_boot_timeline, "0 or 1", "0" },
    { "init_delay", set_init_delay, "auto, 0 or 1us..100ms with a unit: us, ms or s", "auto" },
    { "ap_timeout", set_ap_timeout, "1us..10s with a unit: us, ms or s", "2s" },
    { "nic_irq", set_nic_irq, "msix, msi, intx or none", "msix" },
    { "ip", set_ip, "A.B.C.D/N, N 1..32", "DHCP" },
    { "gw", set_gw, "A.B.C.D", "none (DHCP's)" },
};
#define NKEYS (sizeof keys / sizeof keys[0])
_Static_assert(NKEYS <= 32, "keys_set is a 32-bit mask");

static const struct key *find_key(const char *name, size_t len)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (str_eq_n(name, len, keys[i].name))
            return &keys[i];
    return NULL;
}

// ---- warnings ------------------------------------------------------------

#define MSG_MAX 256
#define WORD_SHOWN 48   // longer words are cut, so one warning fits MSG_MAX

struct msg {
    char s[MSG_MAX];
    size_t n;
};

static void msg_put(struct msg *m, const char *s)
{
    while (*s && m->n < MSG_MAX - 1)
        m->s[m->n++] = *s++;
    m->s[m->n] = '\0';
}

// Appends at most len bytes of user text (a word from the line), cut at
// WORD_SHOWN with "..." and with control bytes shown as '?'.
static void msg_put_user(struct msg *m, const char *s, size_t len)
{
    size_t i;
    for (i = 0; i < len && s[i] && i < WORD_SHOWN && m->n < MSG_MAX - 1; i++) {
        char c = s[i];
        m->s[m->n++] = ((unsigned char)c < 0x20 || c == 0x7f) ? '?' : c;
    }
    m->s[m->n] = '\0';
    if (i == WORD_SHOWN && i < len && s[i])
        msg_put(m, "...");
}

static void msg_put_word(struct msg *m, const char *s)
{
    msg_put_user(m, s, (size_t)-1);
}

static void msg_put_uint(struct msg *m, uint64_t v)
{
    char d[21];
    int i = (int)sizeof d - 1;
    d[i] = '\0';
    do {
        d[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    msg_put(m, &d[i]);
}

struct parser {
    struct kparams *p;
    cmdline_warn_fn warn;
    void *ctx;
    int nwarn;
    uint32_t keys_set;      // bit i: keys[i] took a good value already
    bool in_app;            // an app= word was seen: other words are argv
    bool args_dropped;      // argv overflowed; the overflow was reported
};

static void emit(struct parser *ps, struct msg *m)
{
    ps->nwarn++;
    if (ps->warn)
        ps->warn(ps->ctx, m->s);
}

static const char *const problem[] = {
    [V_MALFORMED] = " is not valid (",
    [V_RANGE] = " is out of range (",
    [V_NEEDS_UNIT] = " needs a unit (",
};

static void warn_value(struct parser *ps, const struct key *k, const char *val, enum verdict v)
{
    struct msg m = { .n = 0 };
    msg_put(&m, "cmdline: ");
    msg_put(&m, k->name);
    msg_put(&m, "=");
    msg_put_word(&m, val);
    msg_put(&m, *val ? problem[v] : " has no value (");
    msg_put(&m, k->accepts);
    if (ps->keys_set & 1u << (k - keys)) {
        msg_put(&m, "); keeping the earlier value");
    } else {
        msg_put(&m, "); using the default (");
        msg_put(&m, k->dflt);
        msg_put(&m, ")");
    }
    emit(ps, &m);
}

static void warn_unknown_key(struct parser *ps, const char *word, size_t keylen)
{
    struct msg m = { .n = 0 };
    msg_put(&m, "cmdline: unknown key \"");
    msg_put_user(&m, word, keylen);
    msg_put(&m, "\" in \"");
    msg_put_word(&m, word);
    msg_put(&m, "\"; ignored");
    emit(ps, &m);
}

static void warn_not_key_value(struct parser *ps, const char *word)
{
    struct msg m = { .n = 0 };
    msg_put(&m, "cmdline: \"");
    msg_put_word(&m, word);
    msg_put(&m, "\" is not a key=value word and comes before app=; ignored");
    emit(ps, &m);
}

static void warn_too_many_args(struct parser *ps, const char *word)
{
    struct msg m = { .n = 0 };
    msg_put(&m, "cmdline: app \"");
    msg_put_word(&m, ps->p->app);
    msg_put(&m, "\" takes at most ");
    msg_put_uint(&m, CMDLINE_ARGV_MAX - 1);
    msg_put(&m, " arguments; dropped \"");
    msg_put_word(&m, word);
    msg_put(&m, "\" and those after it");
    emit(ps, &m);
}

static void warn_truncated(struct parser *ps, const char *rest)
{
    struct msg m = { .n = 0 };
    msg_put(&m, "cmdline: longer than ");
    msg_put_uint(&m, CMDLINE_MAX - 1);
    msg_put(&m, " characters; ignored from \"");
    size_t n = 0;
    while (rest[n] && !is_sep(rest[n]))
        n++;
    msg_put_user(&m, rest, n);
    msg_put(&m, "\" on");
    emit(ps, &m);
}

// ---- the parser ----------------------------------------------------------

static void set_defaults(struct kparams *p)
{
    *p = (struct kparams){
        .gomaxprocs = 0,
        .quantum_ns = QUANTUM_DEFAULT_NS,
        .schedtrace_ns = 0,
        .steal = STEAL_NUMA,
        .idle = IDLE_HLT,
        .numa = true,
        .simd = true,
        .init_delay_ns = INIT_DELAY_AUTO,
        .ap_timeout_ns = AP_TIMEOUT_DEFAULT_NS,
        .nic_irq = NIC_IRQ_MSIX,
    };
}

// Copies line into p->buf. When it does not fit, the cut moves back to the
// last separator so no word is taken half (a cut "gomaxprocs=12" must not
// become gomaxprocs=1), and the rest is reported once.
static void copy_line(struct parser *ps, const char *line)
{
    char *buf = ps->p->buf;
    size_t n = 0;
    // cppcheck 2.17 sizes every line by the "" cmdline_parse passes for
    // NULL; each read of line[n] is at or before line's NUL.
    // cppcheck-suppress arrayIndexOutOfBoundsCond
    while (n < CMDLINE_MAX - 1 && line[n]) {
        buf[n] = line[n];
        n++;
    }
    // cppcheck-suppress arrayIndexOutOfBoundsCond ; as above
    if (line[n] && !is_sep(line[n])) {
        while (n > 0 && !is_sep(line[n - 1]))
            n--;
    }
    buf[n] = '\0';
    const char *rest = line + n;
    while (is_sep(*rest))
        rest++;
    if (*rest)
        warn_truncated(ps, rest);
}

static void add_arg(struct parser *ps, char *word)
{
    struct kparams *p = ps->p;
    if (p->argc < CMDLINE_ARGV_MAX) {
        p->argv[p->argc++] = word;
    } else if (!ps->args_dropped) {
        ps->args_dropped = true;
        warn_too_many_args(ps, word);
    }
}

// app=NAME starts the application's words. A second app= replaces the name
// (last wins, like every key) and keeps the arguments gathered so far.
static void take_app(struct parser *ps, const struct key *k, char *val)
{
    struct kparams *p = ps->p;
    enum verdict v = val[0] ? set_app(p, val) : V_MALFORMED;
    ps->in_app = true;
    if (v != V_OK) {
        warn_value(ps, k, val, v);
        return;
    }
    ps->keys_set |= 1u << (k - keys);
    p->argv[0] = val;
}

static void take_word(struct parser *ps, char *word)
{
    size_t keylen = 0;
    while (word[keylen] && word[keylen] != '=')
        keylen++;
    const struct key *k = word[keylen] == '=' ? find_key(word, keylen) : NULL;
    if (k) {
        char *val = word + keylen + 1;
        if (k->set == set_app) {
            take_app(ps, k, val);
            return;
        }
        enum verdict v = val[0] ? k->set(ps->p, val) : V_MALFORMED;
        if (v == V_OK)
            ps->keys_set |= 1u << (k - keys);
        else
            warn_value(ps, k, val, v);
    } else if (ps->in_app) {
        add_arg(ps, word);
    } else if (word[keylen] == '=') {
        warn_unknown_key(ps, word, keylen);
    } else {
        warn_not_key_value(ps, word);
    }
}

// argv[0..] were gathered with slot 0 kept for the name; without a good
// app= name there is no application and so no argv.
static void finish_argv(struct kparams *p)
{
    if (p->app[0] == '\0')
        p->argc = 0;
    for (int i = p->argc; i <= CMDLINE_ARGV_MAX; i++)
        p->argv[i] = NULL;
}

int cmdline_parse(const char *line, struct kparams *p, cmdline_warn_fn warn, void *ctx)
{
    struct parser ps = { .p = p, .warn = warn, .ctx = ctx };
    set_defaults(p);
    // Slot 0 waits for the app's name: arguments may not precede it, but
    // a rejected app= still collects them, so argc starts at 1 then.
    p->argc = 1;
    copy_line(&ps, line ? line : "");
    char *s = p->buf;
    for (;;) {
        while (is_sep(*s))
            *s++ = '\0';
        if (*s == '\0')
            break;
        // The word is copied down over its own quotes as it is scanned.
        char *word = s, *w = s;
        bool quoted = false;
        for (; *s && (quoted || !is_sep(*s)); s++) {
            if (*s == '"')
                quoted = !quoted;
            else
                *w++ = *s;
        }
        if (*s)
            s++;
        *w = '\0';
        take_word(&ps, word);
    }
    finish_argv(p);
    return ps.nwarn;
}
