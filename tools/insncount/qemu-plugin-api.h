/* SPDX-License-Identifier: MIT
 *
 * The part of QEMU 7.2's TCG plugin API (plugin API version 1) that
 * insncount uses, declared here from QEMU's documentation
 * (docs/devel/tcg-plugins.rst, "API"): Debian's qemu-system-x86 loads
 * plugins but ships no qemu-plugin.h. The functions are exported by the
 * QEMU binary and resolved when it dlopen()s the plugin.
 */
#ifndef INSNCOUNT_QEMU_PLUGIN_API_H
#define INSNCOUNT_QEMU_PLUGIN_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))

/* QEMU refuses a plugin whose qemu_plugin_version lies outside
 * [its minimum, its current]: 7.2 accepts 0 and 1. */
#define QEMU_PLUGIN_VERSION 1

typedef uint64_t qemu_plugin_id_t;

/* What QEMU tells qemu_plugin_install about itself. */
typedef struct qemu_info_t {
    const char *target_name;            /* "x86_64" */
    struct {
        int min;
        int cur;
    } version;                          /* plugin API versions QEMU supports */
    bool system_emulation;              /* false for linux-user */
    union {
        struct {
            int smp_vcpus;              /* -smp N */
            int max_vcpus;              /* -smp maxcpus= */
        } system;
    };
} qemu_info_t;

/* Opaque handles, valid only inside the translation callback. */
struct qemu_plugin_tb;
struct qemu_plugin_insn;

/* What an execution callback may touch of the guest's registers. */
enum qemu_plugin_cb_flags {
    QEMU_PLUGIN_CB_NO_REGS,
    QEMU_PLUGIN_CB_R_REGS,
    QEMU_PLUGIN_CB_RW_REGS,
};

typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);

/* Called for each translation block as it is translated. */
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
/* Called each time the translated block starts executing, before its first
 * instruction, on the thread of the vCPU that executes it. */
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
/* Called each time the instruction is about to execute. */
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
/* Called once as QEMU exits (the guest powered off, or a device ended it). */
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);

/* Writes to QEMU's log: shown only with -d plugin (-D FILE: into FILE). */
void qemu_plugin_outs(const char *string);

#endif
