/* SPDX-License-Identifier: MIT
 *
 * The part of QEMU's TCG plugin API that insncount uses, declared here
 * from QEMU's documentation (docs/devel/tcg-plugins.rst, "API", and the
 * version history in include/qemu/qemu-plugin.h): Debian's qemu-system-x86
 * loads plugins but ships no qemu-plugin.h. The functions are exported by
 * the QEMU binary and resolved when it dlopen()s the plugin.
 *
 * QEMU accepts a plugin whose exported qemu_plugin_version lies within
 * [its minimum, its current] API version, so no one plugin binary fits
 * every QEMU by its number alone:
 *   version 1   QEMU up to 8.2 (7.2, Debian 12's own, accepts 0 and 1)
 *   version 2   QEMU 9: removed qemu_plugin_n_vcpus and the inline
 *               counters (unused here)
 *   version 3   qemu_plugin_insn_data copies the bytes into a buffer
 *               instead of returning a pointer to them
 *   version 4   added qemu_plugin_read_memory_vaddr (unused here);
 *               10.0.2, bookworm-backports' and Debian 13's, accepts 2-4
 * Everything below is the same at every version except
 * qemu_plugin_insn_data, whose two forms are the two types at the end.
 */
#ifndef INSNCOUNT_QEMU_PLUGIN_API_H
#define INSNCOUNT_QEMU_PLUGIN_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))

/* The two API versions insncount speaks (insncount.c picks one as QEMU
 * loads it). */
#define QEMU_PLUGIN_VERSION_POINTER 1   /* insn_data returns a pointer */
#define QEMU_PLUGIN_VERSION_COPY 3      /* insn_data copies into a buffer */

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
typedef void (*qemu_plugin_vcpu_simple_cb_t)(qemu_plugin_id_t id, unsigned int vcpu_index);
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

/* Called as each vCPU starts, on its thread. */
void qemu_plugin_register_vcpu_init_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_simple_cb_t cb);

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);

/* Memory accesses: a callback on each access an instruction makes, with
 * what QEMU knows of it (meminfo) and where it went (hwaddr, system
 * emulation only; valid inside the callback only). */
typedef uint32_t qemu_plugin_meminfo_t;
struct qemu_plugin_hwaddr;
enum qemu_plugin_mem_rw {
    QEMU_PLUGIN_MEM_R = 1,
    QEMU_PLUGIN_MEM_W,
    QEMU_PLUGIN_MEM_RW,
};
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr,
                                          void *userdata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_mem_cb_t cb,
                                      enum qemu_plugin_cb_flags flags, enum qemu_plugin_mem_rw rw, void *userdata);
struct qemu_plugin_hwaddr *qemu_plugin_get_hwaddr(qemu_plugin_meminfo_t info, uint64_t vaddr);
bool qemu_plugin_hwaddr_is_io(const struct qemu_plugin_hwaddr *haddr);
uint64_t qemu_plugin_hwaddr_phys_addr(const struct qemu_plugin_hwaddr *haddr);

/* Writes to QEMU's log: shown only with -d plugin (-D FILE: into FILE). */
void qemu_plugin_outs(const char *string);

/* qemu_plugin_insn_data, the instruction's bytes, in its two forms:
 * version 1 returns a pointer to them; version 3 copies up to len of them
 * into dest and returns how many it copied. */
typedef const void *(*qemu_plugin_insn_data_pointer_t)(const struct qemu_plugin_insn *insn);
typedef size_t (*qemu_plugin_insn_data_copy_t)(const struct qemu_plugin_insn *insn, void *dest, size_t len);

/* Register access, from version 2 (QEMU 9.0) on, so looked up with dlsym:
 * qemu_plugin_get_registers lists the vCPU's registers (GDB's names,
 * "rcx") and may be called only on a vCPU's thread (its init callback);
 * qemu_plugin_read_register reads one, in the guest's byte order, inside
 * a callback registered with QEMU_PLUGIN_CB_R_REGS, and returns its size
 * or -1. Both take GLib's arrays, whose public layout is this; QEMU's
 * process has GLib loaded. */
struct qemu_plugin_register;
typedef struct {
    struct qemu_plugin_register *handle;
    const char *name;
    const char *feature;
} qemu_plugin_reg_descriptor;
typedef struct {
    char *data;
    unsigned int len;
} qemu_plugin_garray;                   /* GArray */
typedef struct {
    uint8_t *data;
    unsigned int len;
} qemu_plugin_gbytearray;               /* GByteArray */
typedef qemu_plugin_garray *(*qemu_plugin_get_registers_t)(void);
typedef int (*qemu_plugin_read_register_t)(struct qemu_plugin_register *handle, qemu_plugin_gbytearray *buf);

#endif
