/* SPDX-License-Identifier: MIT
 *
 * insncount: a QEMU TCG plugin that counts the guest instructions each vCPU
 * executes, split into user (virtual address below 2^63) and kernel (above),
 * and reports the running totals
 *   - whenever the guest executes a marker NOP, nopl 0xFEED00xx(%rax)
 *     (bytes 0F 1F 80 xx 00 ED FE, xx = marker id): a MARK line, and
 *   - once as QEMU exits: an END line, the count of the whole run.
 *
 *   INSNCOUNT START api=A qemu_api=MIN-CUR vcpus=N
 *   INSNCOUNT MARK id=1 vcpu=0 total=T user=U kernel=K cpu0=u/k cpu1=u/k ...
 *   INSNCOUNT END total=T user=U kernel=K cpu0=u/k ...
 *
 * A MARK's figures count the instructions executed before the marker, the
 * marker itself excluded, exactly on the marking vCPU; the other vCPUs'
 * figures are read as they run (whole translation blocks: see below).
 *
 * Arguments (-plugin libinsncount.so,log=PATH): log=PATH writes the lines
 * to PATH; without it they go to QEMU's log (shown only with -d plugin).
 *
 * QEMU's plugin API changed how a plugin reads an instruction's bytes at
 * version 3 (qemu-plugin-api.h), and QEMU takes the plugin's version from
 * its exported qemu_plugin_version, read right after dlopen(): so this
 * one binary serves QEMU 7.2 and QEMU 10 by setting that number in a
 * constructor, which runs inside dlopen(), from the functions the QEMU
 * that loads it exports.
 *
 * How it counts: each translation block (TB) gets an execution callback that
 * adds its instruction count to the executing vCPU's counter as the block
 * starts; a marker instruction gets a callback of its own that subtracts
 * the part of its block not yet executed. A block left early by an
 * exception or fault is counted whole (rare in the guests measured).
 */
#define _GNU_SOURCE                     /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin-api.h"

/* Set by choose_api_version before QEMU reads it. */
QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION_COPY;

/* qemu_plugin_insn_data in the form qemu_plugin_version says (one is set). */
static qemu_plugin_insn_data_pointer_t insn_data_pointer;
static qemu_plugin_insn_data_copy_t insn_data_copy;

/* qemu_plugin_n_vcpus exists up to version 1 only: a QEMU that exports it
 * speaks version 1 (7.2 accepts 0 and 1 and nothing newer); any other
 * gets version 3, the lowest with the copying insn_data (10.0 accepts
 * 2 to 4; 9.0, at 2 alone, refuses it and says so). */
__attribute__((constructor)) static void choose_api_version(void)
{
    if (dlsym(RTLD_DEFAULT, "qemu_plugin_n_vcpus"))
        qemu_plugin_version = QEMU_PLUGIN_VERSION_POINTER;
}

/* One vCPU's counts. Written only by the thread running that vCPU (one at a
 * time: QEMU runs a vCPU on one thread), read by any vCPU's marker and at
 * exit: relaxed atomics, as no other memory is published through them.
 * A cache line each, so vCPUs running in parallel do not share one. */
struct vcpu_count {
    uint64_t user;
    uint64_t kernel;
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
#define LINE_HEAD 160                   /* "INSNCOUNT MARK ..." and the totals */
#define LINE_PER_VCPU 56                /* " cpuN=u/k" */

#define MARKER_LEN 7
static const uint8_t marker_prefix[3] = {0x0f, 0x1f, 0x80};
static const uint8_t marker_suffix[3] = {0x00, 0xed, 0xfe};

/* A TB's execution callback data: its instruction count and whether it is
 * kernel code, packed into the pointer-sized userdata. */
#define TB_KERNEL 1u
#define TB_N_SHIFT 1

/* A marker's callback data: its id, kernel bit, and how many instructions of
 * its block the block's callback counted from the marker on. */
#define MK_KERNEL 1u
#define MK_ID_SHIFT 1
#define MK_BACK_SHIFT 9

static void count_add(unsigned int vcpu, int kernel, int64_t n)
{
    uint64_t *c = kernel ? &counts[vcpu].kernel : &counts[vcpu].user;
    /* Single writer: a relaxed load and store, not a locked add. */
    __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + (uint64_t)n, __ATOMIC_RELAXED);
}

static void on_tb_exec(unsigned int vcpu, void *udata)
{
    uintptr_t d = (uintptr_t)udata;
    if (vcpu < nvcpus)
        count_add(vcpu, d & TB_KERNEL, (int64_t)(d >> TB_N_SHIFT));
}

/* Formats " total=T user=U kernel=K cpu0=u/k ..." into buf. */
static void format_counts(char *buf, size_t len)
{
    uint64_t user = 0, kernel = 0;
    size_t at;
    for (unsigned int i = 0; i < nvcpus; i++) {
        user += __atomic_load_n(&counts[i].user, __ATOMIC_RELAXED);
        kernel += __atomic_load_n(&counts[i].kernel, __ATOMIC_RELAXED);
    }
    at = (size_t)snprintf(buf, len, " total=%" PRIu64 " user=%" PRIu64 " kernel=%" PRIu64,
                          user + kernel, user, kernel);
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

/* Writes "<head> total=... cpu0=... ...\n". */
static void report(const char *head)
{
    size_t at;
    pthread_mutex_lock(&out_lock);
    at = (size_t)snprintf(line, line_len, "%s", head);
    format_counts(line + at, line_len - at - 1);
    strcat(line, "\n");
    emit(line);
    pthread_mutex_unlock(&out_lock);
}

static void on_marker(unsigned int vcpu, void *udata)
{
    uintptr_t d = (uintptr_t)udata;
    char head[64];
    if (vcpu >= nvcpus)
        return;
    /* Take back the rest of the block, counted as it started; add it again
     * after the line, so that the running totals stay those of whole blocks. */
    int64_t back = (int64_t)(d >> MK_BACK_SHIFT);
    count_add(vcpu, d & MK_KERNEL, -back);
    snprintf(head, sizeof(head), "INSNCOUNT MARK id=%u vcpu=%u", (unsigned)((d >> MK_ID_SHIFT) & 0xff), vcpu);
    report(head);
    count_add(vcpu, d & MK_KERNEL, back);
}

/* Copies the marker-sized instruction's bytes into b; false for any other size. */
static bool marker_bytes(const struct qemu_plugin_insn *insn, uint8_t b[MARKER_LEN])
{
    if (qemu_plugin_insn_size(insn) != MARKER_LEN)
        return false;
    if (insn_data_copy)
        return insn_data_copy(insn, b, MARKER_LEN) == MARKER_LEN;
    memcpy(b, insn_data_pointer(insn), MARKER_LEN);
    return true;
}

static bool is_marker(const uint8_t b[MARKER_LEN])
{
    return memcmp(b, marker_prefix, 3) == 0 && memcmp(b + 4, marker_suffix, 3) == 0;
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb);
    uintptr_t kernel = qemu_plugin_tb_vaddr(tb) >> 63;
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb_exec, QEMU_PLUGIN_CB_NO_REGS,
                                         (void *)(((uintptr_t)n << TB_N_SHIFT) | kernel));
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint8_t b[MARKER_LEN];
        if (!marker_bytes(insn, b) || !is_marker(b))
            continue;
        uintptr_t d = ((uintptr_t)(n - i) << MK_BACK_SHIFT) | ((uintptr_t)b[3] << MK_ID_SHIFT) | kernel;
        qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker, QEMU_PLUGIN_CB_NO_REGS, (void *)d);
    }
}

static void on_qemu_exit(qemu_plugin_id_t id, void *udata)
{
    (void)id;
    (void)udata;
    report("INSNCOUNT END");
    if (out)
        fclose(out);
    out = NULL;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    const char *path = NULL;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "log=", 4) == 0) {
            path = argv[i] + 4;
        } else {
            fprintf(stderr, "insncount: unknown argument %s (log=PATH)\n", argv[i]);
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
    /* linux-user has no vCPU count: threads come and go. */
    nvcpus = info->system_emulation && info->system.max_vcpus > 0 ? (unsigned int)info->system.max_vcpus : 64;
    counts = aligned_alloc(64, nvcpus * sizeof(*counts));
    line_len = LINE_HEAD + LINE_PER_VCPU * (size_t)nvcpus;
    line = malloc(line_len);
    if (!counts || !line)
        return -1;
    memset(counts, 0, nvcpus * sizeof(*counts));
    if (path) {
        out = fopen(path, "w");
        if (!out) {
            perror(path);
            return -1;
        }
    }
    snprintf(line, line_len, "INSNCOUNT START api=%d qemu_api=%d-%d vcpus=%u\n", qemu_plugin_version,
             info->version.min, info->version.cur, nvcpus);
    emit(line);
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
    qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
    return 0;
}
