/* SPDX-License-Identifier: MIT
 *
 * insncount: a QEMU TCG plugin that counts, per vCPU, the guest
 * instructions executed (user, virtual address below 2^63, and kernel),
 * the atomic read-modify-writes among them by kind, the halts and the
 * IPIs sent, and reports the running totals
 *   - whenever the guest executes a marker: a MARK line, and
 *   - once as QEMU exits: an END line, the count of the whole run.
 *
 *   INSNCOUNT START api=A qemu_api=MIN-CUR vcpus=N x2apic_ipis=yes|no marks=M
 *   INSNCOUNT MARK id=1 vcpu=0 total=T user=U kernel=K atomics=A cmpxchg=C
 *       xadd=X xchg=W lockop=L halts=H pauses=P wrmsrs=M ipis=I cpu0=u/k ...
 *   INSNCOUNT END total=T ... (the same fields)
 *
 * What counts as what:
 *   atomics  every LOCK-prefixed instruction and every XCHG with a memory
 *            operand (locked without the prefix), split by kind: cmpxchg
 *            (CMPXCHG, CMPXCHG8B/16B), xadd, xchg, lockop (any other
 *            locked instruction: add, sub, inc, dec, and, or, xor, bts...)
 *   halts    HLT and MWAIT executed
 *   pauses   PAUSE executed (a spin-wait's; under TCG each leaves the
 *            translated code for QEMU's main loop)
 *   wrmsrs   WRMSR executed, any register (under TCG a TSC-deadline write
 *            re-arms one of QEMU's timers: host work no guest count shows)
 *   xlines   (lines=1 only) atomics whose cache line (64 bytes of guest
 *            physical memory) another vCPU's atomic touched last: a
 *            proxy for the line moving between host cores, which plain
 *            accesses, not watched, can also cause
 *   ipis     writes to the local APIC's interrupt command register: in
 *            x2APIC mode a WRMSR to 0x830, counted where the plugin can
 *            read the guest's RCX (QEMU 9.0 and later: START says
 *            x2apic_ipis=yes); in xAPIC mode a store to 0xFEE00300, watched in
 *            higher-half code only (a Linux guest's kernel: watching
 *            every store would slow every guest), so a guest that runs
 *            its kernel low in xAPIC mode shows none (goro runs x2APIC
 *            where the CPU offers it, -cpu max from QEMU 9.0)
 *
 * Markers:
 *   - a marker NOP, nopl 0xFEED00xx(%rax) (bytes 0F 1F 80 xx 00 ED FE,
 *     xx = id): an ordinary NOP on hardware, for programs one can change;
 *   - an address marker (marks=PATH, below): a user-mode instruction at a
 *     given virtual address with given leading bytes, for programs one
 *     cannot change (Go's test binaries: the host finds the addresses in
 *     the binary). The bytes make a marker of one program fire in no other
 *     program mapped at the same address.
 * A MARK's figures count what executed before the marker, the marker
 * itself excluded, exactly on the marking vCPU; the other vCPUs' figures
 * are read as they run (whole translation blocks: see below).
 *
 * Arguments (-plugin libinsncount.so,log=PATH,marks=PATH):
 *   log=PATH    the lines go to PATH; without it to QEMU's log (shown
 *               only with -d plugin)
 *   marks=PATH  address markers, one a line: ADDR ID BYTES (hex address,
 *               decimal id 3-255, the instruction's first bytes in hex);
 *               '#' starts a comment
 *   threads=1   also, at each MARK and at the END, a THREADS line: the host
 *               time of each vCPU's thread so far, from Linux's schedstat
 *               (cpuN=run/wait/slices: ns on a host CPU, ns runnable but
 *               waiting for one, times run), the rest of QEMU's threads
 *               summed (other=...), and the host's monotonic clock
 *               (host_ns=): where a guest phase's wall time went. The vCPU
 *               threads are found by name, so QEMU runs with
 *               -name NAME,debug-threads=on ("CPU 3/TCG").
 *   profile=PATH  also count, per translation block, the instructions
 *               executed between marker 1 and marker 2 (any vCPU's), and
 *               write "PROFILE vaddr insns atomics" lines to PATH as QEMU
 *               exits: where an op's instructions and atomics go (insncount_report.py
 *               --profile sums them by symbol). Slower: a locked add per
 *               block executed.
 *   lines=1     also count xlines (above): a memory callback on every
 *               atomic and a table of 2^20 lines, each with the vCPU whose
 *               atomic touched it last (lines sharing a slot read as
 *               unseen). Slower.
 *
 * QEMU's plugin API changed how a plugin reads an instruction's bytes at
 * version 3 (qemu-plugin-api.h), and QEMU takes the plugin's version from
 * its exported qemu_plugin_version, read right after dlopen(): so this
 * one binary serves QEMU 7.2 and QEMU 10 by setting that number in a
 * constructor, which runs inside dlopen(), from the functions the QEMU
 * that loads it exports.
 *
 * How it counts: each translation block (TB) gets an execution callback
 * that adds its tally (instructions, atomics by kind, halts) to the
 * executing vCPU's counters as the block starts; a marker gets a callback
 * of its own that subtracts the tally of the part of its block not yet
 * executed. A block left early by an exception or fault is counted whole
 * (rare in the guests measured). A WRMSR gets a callback that reads RCX.
 */
#define _GNU_SOURCE                     /* RTLD_DEFAULT */
#include <dirent.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qemu-plugin-api.h"

/* Set by choose_api_version before QEMU reads it. */
QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION_COPY;

/* qemu_plugin_insn_data in the form qemu_plugin_version says (one is set). */
static qemu_plugin_insn_data_pointer_t insn_data_pointer;
static qemu_plugin_insn_data_copy_t insn_data_copy;

/* Register reads (QEMU 9.0 and later; NULL before): RCX's handle, found
 * on the first vCPU's thread. */
static qemu_plugin_get_registers_t get_registers;
static qemu_plugin_read_register_t read_register;
static qemu_plugin_gbytearray *(*g_byte_array_new_fn)(void);
static uint8_t *(*g_byte_array_free_fn)(qemu_plugin_gbytearray *array, int free_segment);
static char *(*g_array_free_fn)(qemu_plugin_garray *array, int free_segment);
static struct qemu_plugin_register *rcx;
static pthread_once_t rcx_once = PTHREAD_ONCE_INIT;

/* qemu_plugin_n_vcpus exists up to version 1 only: a QEMU that exports it
 * speaks version 1 (7.2 accepts 0 and 1 and nothing newer); any other
 * gets version 3, the lowest with the copying insn_data (10.0 accepts
 * 2 to 4; 9.0, at 2 alone, refuses it and says so). */
__attribute__((constructor)) static void choose_api_version(void)
{
    if (dlsym(RTLD_DEFAULT, "qemu_plugin_n_vcpus"))
        qemu_plugin_version = QEMU_PLUGIN_VERSION_POINTER;
}

/* ---- what a block, or its rest after a marker, adds ------------------------
 *
 * A tally packs into the pointer-sized callback data, 10 bits a count (a
 * TB holds at most 512 instructions), so that the block's callback does
 * no lookup:
 *   bits  0-9   instructions
 *   bits 10-49  atomics: cmpxchg, xadd, xchg, lockop, 10 bits each
 *   bits 50-51  halts
 *   bit  52     kernel code
 *   bits 53-60  marker id (a marker's data only)
 *   bits 61-62  pauses (a PAUSE ends its block under TCG: one at most)
 *   bit  63     a WRMSR (it ends its block under TCG: one at most)
 */
enum kind { K_PLAIN, K_CMPXCHG, K_XADD, K_XCHG, K_LOCKOP, K_HALT, K_WRMSR, K_PAUSE };
#define NATOMIC 4                       /* K_CMPXCHG..K_LOCKOP */
#define FIELD_BITS 10
#define FIELD_MAX ((1u << FIELD_BITS) - 1)
#define T_INSNS 0
#define T_ATOMIC(k) (FIELD_BITS * (k))  /* k = K_CMPXCHG..K_LOCKOP: bits 10.. */
#define T_HALTS 50
#define T_KERNEL 52
#define T_ID 53
#define T_PAUSES 61
#define T_WRMSRS 63
#define TMASK(bits) ((1ull << (bits)) - 1)

static const char *const atomic_name[NATOMIC] = {"cmpxchg", "xadd", "xchg", "lockop"};

/* One vCPU's counts. Written only by the thread running that vCPU (one at a
 * time: QEMU runs a vCPU on one thread), read by any vCPU's marker and at
 * exit: relaxed atomics, as no other memory is published through them.
 * A cache line each, so vCPUs running in parallel do not share one. */
struct vcpu_count {
    uint64_t user;
    uint64_t kernel;
    uint64_t atomic[NATOMIC];
    uint64_t halts;
    uint64_t pauses;
    uint64_t wrmsrs;
    uint64_t ipis;
    uint64_t xlines;
} __attribute__((aligned(64)));

static struct vcpu_count *counts;
static unsigned int nvcpus;

/* Output: the lines are made in line and go out whole under out_lock (vCPU
 * threads and the exit callback may report at once). out == NULL: QEMU's
 * log. line has room for every vCPU's figures. */
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;
static char *line;
static size_t line_len;
#define LINE_HEAD 400                   /* "INSNCOUNT MARK ..." and the totals */
#define LINE_PER_VCPU 72                /* " cpuN=u/k", or threads=1's " cpuN=run/wait/slices" */

#define MARKER_LEN 7
static const uint8_t marker_prefix[3] = {0x0f, 0x1f, 0x80};
static const uint8_t marker_suffix[3] = {0x00, 0xed, 0xfe};

/* Address markers (marks=PATH). */
#define MAX_MARKS 256
#define MARK_BYTES 15
struct addr_mark {
    uint64_t vaddr;
    uint8_t id;
    uint8_t len;
    uint8_t bytes[MARK_BYTES];
};
static struct addr_mark marks[MAX_MARKS];
static unsigned int nmarks;

/* Single writer: a relaxed load and store, not a locked add. */
static void bump(uint64_t *c, int64_t n)
{
    __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + (uint64_t)n, __ATOMIC_RELAXED);
}

/* Adds sign * the tally t to vcpu's counters. */
static void tally_add(unsigned int vcpu, uint64_t t, int sign)
{
    struct vcpu_count *c = &counts[vcpu];
    bump((t >> T_KERNEL) & 1 ? &c->kernel : &c->user, sign * (int64_t)(t & FIELD_MAX));
    for (int k = 0; k < NATOMIC; k++) {
        uint64_t n = (t >> T_ATOMIC(K_CMPXCHG + k)) & FIELD_MAX;
        if (n)
            bump(&c->atomic[k], sign * (int64_t)n);
    }
    if ((t >> T_HALTS) & 3)
        bump(&c->halts, sign * (int64_t)((t >> T_HALTS) & 3));
    if ((t >> T_PAUSES) & 3)
        bump(&c->pauses, sign * (int64_t)((t >> T_PAUSES) & 3));
    if ((t >> T_WRMSRS) & 1)
        bump(&c->wrmsrs, sign);
}

static void on_tb_exec(unsigned int vcpu, void *udata)
{
    if (vcpu < nvcpus)
        tally_add(vcpu, (uintptr_t)udata, 1);
}

/* ---- profile=PATH: instructions by block --------------------------------------
 *
 * A record per translation (a block translated again gets another; the
 * report sums them by address), on a list that only grows; armed between
 * marker 1 and marker 2. */
struct prof_tb {
    struct prof_tb *next;
    uint64_t vaddr;
    uint64_t tally;                     /* the block's, as on_tb_exec's */
    uint64_t insns;                     /* executed while armed: any vCPU, locked adds */
};
static const char *profile_path;
static struct prof_tb *prof_list;
static pthread_mutex_t prof_lock = PTHREAD_MUTEX_INITIALIZER;
static int prof_armed;

static void on_tb_exec_prof(unsigned int vcpu, void *udata)
{
    struct prof_tb *r = udata;
    if (vcpu < nvcpus)
        tally_add(vcpu, r->tally, 1);
    if (__atomic_load_n(&prof_armed, __ATOMIC_RELAXED))
        __atomic_fetch_add(&r->insns, r->tally & FIELD_MAX, __ATOMIC_RELAXED);
}

static void prof_write(void)
{
    FILE *f = fopen(profile_path, "w");
    if (!f) {
        perror(profile_path);
        return;
    }
    for (struct prof_tb *r = prof_list; r; r = r->next) {
        if (!r->insns)
            continue;
        /* The block's atomics times the times it ran: its instructions
         * over its length (a marker's block may be cut short: rare). */
        uint64_t atomics = 0, len = r->tally & FIELD_MAX;
        for (int k = 0; k < NATOMIC; k++)
            atomics += r->tally >> T_ATOMIC(K_CMPXCHG + k) & FIELD_MAX;
        fprintf(f, "PROFILE %" PRIx64 " %" PRIu64 " %" PRIu64 "\n", r->vaddr, r->insns,
                len ? atomics * (r->insns / len) : 0);
    }
    fclose(f);
}

/* ---- lines=1: atomics on a line another vCPU's atomic touched last ---------------
 *
 * A slot per line, by its physical line number modulo the table: the line
 * number above LINE_VCPU_BITS, the vCPU below, swapped in whole. */
#define LINE_SLOTS (1u << 20)
#define LINE_VCPU_BITS 12
static int watch_lines;
static uint64_t *line_last;

static void on_atomic_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
    (void)udata;
    struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
    if (vcpu >= nvcpus || !hw || qemu_plugin_hwaddr_is_io(hw))
        return;
    uint64_t ln = qemu_plugin_hwaddr_phys_addr(hw) >> 6;
    uint64_t mine = ln << LINE_VCPU_BITS | vcpu;
    /* relaxed: the slot carries nothing but itself */
    uint64_t last = __atomic_exchange_n(&line_last[ln % LINE_SLOTS], mine, __ATOMIC_RELAXED);
    if (last >> LINE_VCPU_BITS == ln && (last & TMASK(LINE_VCPU_BITS)) != vcpu)
        bump(&counts[vcpu].xlines, 1);
}

/* ---- decoding just enough of an instruction -------------------------------- */

/* What kind of instruction b[0..len) is, for the counters. Legacy prefixes
 * and a REX byte come before the opcode (in 32-bit code 0x40-0x4F are
 * INC/DEC, a whole instruction, which then ends before any opcode). */
static enum kind classify(const uint8_t *b, size_t len)
{
    size_t i = 0;
    int lock = 0, rep = 0;
    for (; i < len; i++) {
        uint8_t c = b[i];
        if (c == 0xf0)
            lock = 1;
        else if (c == 0xf3)
            rep = 1;
        else if (!(c == 0xf2 || c == 0xf3 || c == 0x2e || c == 0x36 || c == 0x3e || c == 0x26 ||
                   c == 0x64 || c == 0x65 || c == 0x66 || c == 0x67))
            break;
    }
    if (rep && i < len && b[i] == 0x90)
        return K_PAUSE;                 /* F3 90, no REX (F3 41 90 is an xchg) */
    if (i < len && (b[i] & 0xf0) == 0x40)
        i++;
    if (i >= len)
        return K_PLAIN;
    uint8_t op = b[i];
    if (op == 0x0f && i + 1 < len) {
        uint8_t op2 = b[i + 1];
        if (lock && (op2 == 0xb0 || op2 == 0xb1 || op2 == 0xc7))
            return K_CMPXCHG;
        if (lock && (op2 == 0xc0 || op2 == 0xc1))
            return K_XADD;
        if (op2 == 0x30)
            return K_WRMSR;
        if (op2 == 0x01 && i + 2 < len && b[i + 2] == 0xc9)
            return K_HALT;              /* MWAIT */
    } else if ((op == 0x86 || op == 0x87) && i + 1 < len && (b[i + 1] >> 6) != 3) {
        return K_XCHG;                  /* XCHG with memory: locked, prefix or not */
    } else if (op == 0xf4) {
        return K_HALT;
    }
    return lock ? K_LOCKOP : K_PLAIN;
}

/* Copies up to max of the instruction's bytes into b; returns how many. */
static size_t insn_bytes(const struct qemu_plugin_insn *insn, uint8_t *b, size_t max)
{
    size_t n = qemu_plugin_insn_size(insn);
    if (n > max)
        n = max;
    if (insn_data_copy)
        return insn_data_copy(insn, b, n);
    memcpy(b, insn_data_pointer(insn), n);
    return n;
}

static uint64_t tally_of(enum kind k)
{
    if (k >= K_CMPXCHG && k <= K_LOCKOP)
        return 1ull << T_ATOMIC(k);
    if (k == K_HALT)
        return 1ull << T_HALTS;
    if (k == K_PAUSE)
        return 1ull << T_PAUSES;
    if (k == K_WRMSR)
        return 1ull << T_WRMSRS;
    return 0;
}

/* ---- output ------------------------------------------------------------------ */

/* Formats " total=T user=U ... cpu0=u/k ..." into buf. */
static void format_counts(char *buf, size_t len)
{
    uint64_t user = 0, kernel = 0, atomic[NATOMIC] = {0}, halts = 0, pauses = 0, wrmsrs = 0, ipis = 0,
             atomics = 0, xlines = 0;
    size_t at;
    for (unsigned int i = 0; i < nvcpus; i++) {
        user += __atomic_load_n(&counts[i].user, __ATOMIC_RELAXED);
        kernel += __atomic_load_n(&counts[i].kernel, __ATOMIC_RELAXED);
        for (int k = 0; k < NATOMIC; k++)
            atomic[k] += __atomic_load_n(&counts[i].atomic[k], __ATOMIC_RELAXED);
        halts += __atomic_load_n(&counts[i].halts, __ATOMIC_RELAXED);
        pauses += __atomic_load_n(&counts[i].pauses, __ATOMIC_RELAXED);
        wrmsrs += __atomic_load_n(&counts[i].wrmsrs, __ATOMIC_RELAXED);
        ipis += __atomic_load_n(&counts[i].ipis, __ATOMIC_RELAXED);
        xlines += __atomic_load_n(&counts[i].xlines, __ATOMIC_RELAXED);
    }
    for (int k = 0; k < NATOMIC; k++)
        atomics += atomic[k];
    at = (size_t)snprintf(buf, len, " total=%" PRIu64 " user=%" PRIu64 " kernel=%" PRIu64 " atomics=%" PRIu64,
                          user + kernel, user, kernel, atomics);
    for (int k = 0; k < NATOMIC && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, " %s=%" PRIu64, atomic_name[k], atomic[k]);
    if (at < len)
        at += (size_t)snprintf(buf + at, len - at, " halts=%" PRIu64, halts);
    if (at < len)
        at += (size_t)snprintf(buf + at, len - at, " pauses=%" PRIu64, pauses);
    if (at < len)
        at += (size_t)snprintf(buf + at, len - at, " wrmsrs=%" PRIu64, wrmsrs);
    if (at < len)
        at += (size_t)snprintf(buf + at, len - at, " ipis=%" PRIu64, ipis);
    if (watch_lines && at < len)
        at += (size_t)snprintf(buf + at, len - at, " xlines=%" PRIu64, xlines);
    for (unsigned int i = 0; i < nvcpus && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, " cpu%u=%" PRIu64 "/%" PRIu64, i,
                               __atomic_load_n(&counts[i].user, __ATOMIC_RELAXED),
                               __atomic_load_n(&counts[i].kernel, __ATOMIC_RELAXED));
}

static void emit(const char *s)
{
    if (out) {
        fputs(s, out);
        fflush(out);
    } else {
        qemu_plugin_outs(s);
    }
}

/* ---- threads=1: the host's side ----------------------------------------------- */

static int threads_on;

/* Reads /proc/self/task/TID/F's first line into buf; 0 if it cannot. */
static int task_read(const char *tid, const char *f, char *buf, size_t len)
{
    char path[300];                     /* a d_name is at most 255 bytes */
    snprintf(path, sizeof(path), "/proc/self/task/%s/%s", tid, f);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;
    int ok = fgets(buf, (int)len, fp) != NULL;
    fclose(fp);
    return ok;
}

/* Appends " host_ns=H cpu0=run/wait/slices ... other=run/wait/slices" to
 * line (its room: LINE_PER_VCPU a vCPU). Under out_lock. */
static void format_threads(char *buf, size_t len)
{
    struct timespec ts;
    uint64_t orun = 0, owait = 0, oslices = 0;
    size_t at;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    at = (size_t)snprintf(buf, len, " host_ns=%" PRIu64, (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec);
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d)) && at < len;) {
        char comm[64], stat[128];
        uint64_t run, wait, slices;
        unsigned int vcpu;
        if (e->d_name[0] == '.' || !task_read(e->d_name, "comm", comm, sizeof(comm)) ||
            !task_read(e->d_name, "schedstat", stat, sizeof(stat)) ||
            sscanf(stat, "%" SCNu64 " %" SCNu64 " %" SCNu64, &run, &wait, &slices) != 3)
            continue;
        if (sscanf(comm, "CPU %u/TCG", &vcpu) == 1)
            at += (size_t)snprintf(buf + at, len - at, " cpu%u=%" PRIu64 "/%" PRIu64 "/%" PRIu64, vcpu, run, wait,
                                   slices);
        else
            orun += run, owait += wait, oslices += slices;
    }
    closedir(d);
    if (at < len)
        snprintf(buf + at, len - at, " other=%" PRIu64 "/%" PRIu64 "/%" PRIu64, orun, owait, oslices);
}

/* Writes "<head> total=... cpu0=... ...\n". */
static void report(const char *head)
{
    size_t at;
    pthread_mutex_lock(&out_lock);
    at = (size_t)snprintf(line, line_len, "%s", head);
    format_counts(line + at, line_len - at - 1);
    strcat(line, "\n");
    emit(line);
    if (threads_on) {
        at = (size_t)snprintf(line, line_len, "INSNCOUNT THREADS%s", head + strlen("INSNCOUNT"));
        format_threads(line + at, line_len - at - 1);
        strcat(line, "\n");
        emit(line);
    }
    pthread_mutex_unlock(&out_lock);
}

/* ---- callbacks ------------------------------------------------------------------ */

/* udata: the tally of the marker and the rest of its block, with its id. */
static void on_marker(unsigned int vcpu, void *udata)
{
    uint64_t d = (uintptr_t)udata;
    char head[64];
    if (vcpu >= nvcpus)
        return;
    /* Take back the rest of the block, counted as it started; add it again
     * after the line, so that the running totals stay those of whole blocks. */
    tally_add(vcpu, d, -1);
    unsigned int mid = (unsigned)((d >> T_ID) & 0xff);
    snprintf(head, sizeof(head), "INSNCOUNT MARK id=%u vcpu=%u", mid, vcpu);
    report(head);
    tally_add(vcpu, d, 1);
    if (profile_path && (mid == 1 || mid == 2))
        __atomic_store_n(&prof_armed, mid == 1, __ATOMIC_RELAXED);
}

static void on_wrmsr(unsigned int vcpu, void *udata)
{
    (void)udata;
    if (vcpu >= nvcpus || !rcx)
        return;
    qemu_plugin_gbytearray *buf = g_byte_array_new_fn();
    if (read_register(rcx, buf) >= 4 && buf->len >= 4) {
        uint32_t ecx = (uint32_t)buf->data[0] | (uint32_t)buf->data[1] << 8 | (uint32_t)buf->data[2] << 16 |
                       (uint32_t)buf->data[3] << 24;
        if (ecx == 0x830)               /* x2APIC ICR */
            bump(&counts[vcpu].ipis, 1);
    }
    g_byte_array_free_fn(buf, 1);
}

/* A store from higher-half code: an IPI if it wrote the xAPIC's ICR (its
 * low half, whose write sends). */
#define XAPIC_ICR_LO 0xfee00300ull
static void on_kernel_store(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
    (void)udata;
    struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
    if (vcpu < nvcpus && hw && qemu_plugin_hwaddr_is_io(hw) && qemu_plugin_hwaddr_phys_addr(hw) == XAPIC_ICR_LO)
        bump(&counts[vcpu].ipis, 1);
}

static void find_rcx(void)
{
    qemu_plugin_garray *regs = get_registers();
    if (!regs)
        return;
    qemu_plugin_reg_descriptor *d = (qemu_plugin_reg_descriptor *)regs->data;
    for (unsigned int i = 0; i < regs->len; i++)
        if (strcmp(d[i].name, "rcx") == 0)
            rcx = d[i].handle;
    g_array_free_fn(regs, 1);
}

static void on_vcpu_init(qemu_plugin_id_t id, unsigned int vcpu)
{
    (void)id;
    (void)vcpu;
    pthread_once(&rcx_once, find_rcx);
}

static const struct addr_mark *addr_mark_at(uint64_t vaddr, const uint8_t *b, size_t n)
{
    for (unsigned int i = 0; i < nmarks; i++)
        if (marks[i].vaddr == vaddr && n >= marks[i].len && memcmp(b, marks[i].bytes, marks[i].len) == 0)
            return &marks[i];
    return NULL;
}

static int marker_id(const struct qemu_plugin_insn *insn, const uint8_t *b, size_t n)
{
    if (n == MARKER_LEN && memcmp(b, marker_prefix, 3) == 0 && memcmp(b + 4, marker_suffix, 3) == 0)
        return b[3];
    uint64_t vaddr = qemu_plugin_insn_vaddr(insn);
    const struct addr_mark *m = nmarks && !(vaddr >> 63) ? addr_mark_at(vaddr, b, n) : NULL;
    return m ? m->id : -1;
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb);
    uint64_t kernel = (uint64_t)(qemu_plugin_tb_vaddr(tb) >> 63) << T_KERNEL;
    uint64_t whole = kernel | (n > FIELD_MAX ? FIELD_MAX : n);
    uint64_t rest[n + 1];               /* rest[i]: the tally of insns i..n-1 */
    int ids[n];
    enum kind kinds[n];
    (void)id;
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint8_t b[16];
        size_t len = insn_bytes(insn, b, sizeof(b));
        kinds[i] = classify(b, len);
        ids[i] = marker_id(insn, b, len);
        whole += tally_of(kinds[i]);
    }
    rest[n] = kernel;
    for (size_t i = n; i-- > 0;)
        rest[i] = rest[i + 1] + 1 + tally_of(kinds[i]);
    if (profile_path) {
        struct prof_tb *r = calloc(1, sizeof(*r));
        if (r) {
            r->vaddr = qemu_plugin_tb_vaddr(tb);
            r->tally = whole;
            pthread_mutex_lock(&prof_lock);
            r->next = prof_list;
            prof_list = r;
            pthread_mutex_unlock(&prof_lock);
            qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb_exec_prof, QEMU_PLUGIN_CB_NO_REGS, r);
        }
    } else {
        qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb_exec, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)whole);
    }
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        if (ids[i] >= 0)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker, QEMU_PLUGIN_CB_NO_REGS,
                                                   (void *)(uintptr_t)(rest[i] | (uint64_t)ids[i] << T_ID));
        if (kinds[i] == K_WRMSR && read_register)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_wrmsr, QEMU_PLUGIN_CB_R_REGS, NULL);
        if (kernel)
            qemu_plugin_register_vcpu_mem_cb(insn, on_kernel_store, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_W, NULL);
        /* The store of a read-modify-write: one callback each. */
        if (watch_lines && kinds[i] >= K_CMPXCHG && kinds[i] <= K_LOCKOP)
            qemu_plugin_register_vcpu_mem_cb(insn, on_atomic_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_W, NULL);
    }
}

static void on_qemu_exit(qemu_plugin_id_t id, void *udata)
{
    (void)id;
    (void)udata;
    report("INSNCOUNT END");
    if (profile_path)
        prof_write();
    if (out)
        fclose(out);
    out = NULL;
}

/* ---- set-up -------------------------------------------------------------------------- */

static int hexbytes(const char *s, uint8_t *b, size_t max)
{
    size_t n = 0;
    unsigned int v;
    while (s[0] && s[1] && n < max && sscanf(s, "%2x", &v) == 1) {
        b[n++] = (uint8_t)v;
        s += 2;
    }
    return s[0] && s[0] != '\n' ? -1 : (int)n;
}

static int read_marks(const char *path)
{
    FILE *f = fopen(path, "r");
    char buf[256], hex[2 * MARK_BYTES + 2];
    if (!f) {
        perror(path);
        return -1;
    }
    for (int lineno = 1; fgets(buf, sizeof(buf), f); lineno++) {
        uint64_t vaddr;
        unsigned int mid;
        int len;
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = 0;
        if (strspn(buf, " \t\r\n") == strlen(buf))
            continue;
        if (sscanf(buf, "%" SCNx64 " %u %31s", &vaddr, &mid, hex) != 3 || mid < 3 || mid > 255 ||
            nmarks == MAX_MARKS || (len = hexbytes(hex, marks[nmarks].bytes, MARK_BYTES)) <= 0) {
            fprintf(stderr, "insncount: %s:%d: want ADDR ID BYTES (id 3-255, up to %d bytes; %d marks at most)\n",
                    path, lineno, MARK_BYTES, MAX_MARKS);
            fclose(f);
            return -1;
        }
        marks[nmarks].vaddr = vaddr;
        marks[nmarks].id = (uint8_t)mid;
        marks[nmarks].len = (uint8_t)len;
        nmarks++;
    }
    fclose(f);
    return 0;
}

/* The register API and the GLib calls it needs, where this QEMU has them. */
static void find_register_api(void)
{
    get_registers = (qemu_plugin_get_registers_t)dlsym(RTLD_DEFAULT, "qemu_plugin_get_registers");
    g_byte_array_new_fn = (qemu_plugin_gbytearray * (*)(void)) dlsym(RTLD_DEFAULT, "g_byte_array_new");
    g_byte_array_free_fn =
        (uint8_t * (*)(qemu_plugin_gbytearray *, int)) dlsym(RTLD_DEFAULT, "g_byte_array_free");
    g_array_free_fn = (char *(*)(qemu_plugin_garray *, int))dlsym(RTLD_DEFAULT, "g_array_free");
    read_register = (qemu_plugin_read_register_t)dlsym(RTLD_DEFAULT, "qemu_plugin_read_register");
    if (!get_registers || !g_byte_array_new_fn || !g_byte_array_free_fn || !g_array_free_fn)
        read_register = NULL;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    const char *path = NULL;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "log=", 4) == 0) {
            path = argv[i] + 4;
        } else if (strcmp(argv[i], "threads=1") == 0) {
            threads_on = 1;
        } else if (strncmp(argv[i], "profile=", 8) == 0) {
            profile_path = argv[i] + 8;
        } else if (strcmp(argv[i], "lines=1") == 0) {
            watch_lines = 1;
        } else if (strncmp(argv[i], "marks=", 6) == 0) {
            if (read_marks(argv[i] + 6) < 0)
                return -1;
        } else {
            fprintf(stderr, "insncount: unknown argument %s (log=PATH, marks=PATH, profile=PATH, threads=1, "
                    "lines=1)\n", argv[i]);
            return -1;
        }
    }
    void *data = dlsym(RTLD_DEFAULT, "qemu_plugin_insn_data");
    if (!data) {
        fprintf(stderr, "insncount: this QEMU exports no qemu_plugin_insn_data\n");
        return -1;
    }
    if (qemu_plugin_version == QEMU_PLUGIN_VERSION_POINTER)
        insn_data_pointer = (qemu_plugin_insn_data_pointer_t)data;
    else
        insn_data_copy = (qemu_plugin_insn_data_copy_t)data;
    find_register_api();
    /* linux-user has no vCPU count: threads come and go. */
    nvcpus = info->system_emulation && info->system.max_vcpus > 0 ? (unsigned int)info->system.max_vcpus : 64;
    counts = aligned_alloc(64, nvcpus * sizeof(*counts));
    line_len = LINE_HEAD + LINE_PER_VCPU * (size_t)nvcpus;
    line = malloc(line_len);
    if (watch_lines && nvcpus >= (1u << LINE_VCPU_BITS)) {
        fprintf(stderr, "insncount: lines=1 counts up to %u vCPUs\n", (1u << LINE_VCPU_BITS) - 1);
        return -1;
    }
    if (watch_lines)
        line_last = calloc(LINE_SLOTS, sizeof(*line_last));
    if (!counts || !line || (watch_lines && !line_last))
        return -1;
    memset(counts, 0, nvcpus * sizeof(*counts));
    if (path) {
        out = fopen(path, "w");
        if (!out) {
            perror(path);
            return -1;
        }
    }
    snprintf(line, line_len, "INSNCOUNT START api=%d qemu_api=%d-%d vcpus=%u x2apic_ipis=%s marks=%u\n",
             qemu_plugin_version, info->version.min, info->version.cur, nvcpus, read_register ? "yes" : "no",
             nmarks);
    emit(line);
    if (read_register)
        qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
    qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
    return 0;
}
