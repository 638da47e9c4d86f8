// SPDX-License-Identifier: MIT
// The kernel command line: `key=value` words for the kernel, then
// `app=NAME arg...`, whose arguments go to the application.
//
// Rules:
//  - Before app=, every word must be a known key=value; anything else is
//    rejected with a warning naming it.
//  - After app=NAME, a word whose key is a kernel key is still the kernel's;
//    every other word is the application's (argv[1..]).
//  - A bad value is rejected with a warning that names the key, the value
//    and the accepted range or choices; the default stays.
//  - Double quotes make spaces part of a word and are removed:
//    script="run hello; halt" is one word, script=run hello; halt. A quote
//    left open runs to the end of the line.
// The parser is pure (no kernel calls), so host unit tests drive it.
#ifndef GORO_CMDLINE_H
#define GORO_CMDLINE_H

#include <stdbool.h>
#include <stdint.h>

#define CMDLINE_MAX 1024
#define CMDLINE_ARGV_MAX 32

#define INIT_DELAY_AUTO UINT64_MAX

// The time slice's range: quantum=, the shell's quantum and
// sched_set_quantum_ns all keep to it.
#define QUANTUM_MIN_NS 20000ull
#define QUANTUM_MAX_NS 1000000000ull

enum steal_policy { STEAL_NUMA, STEAL_FLAT };
enum idle_policy { IDLE_HLT, IDLE_MWAIT, IDLE_POLL };
// nic_irq=: the best interrupt mode a NIC may use (drivers/pci/pci.h's
// enum pci_irq_mode, same order): none (polled only), intx, msi, msix.
enum nic_irq { NIC_IRQ_NONE, NIC_IRQ_INTX, NIC_IRQ_MSI, NIC_IRQ_MSIX };

// delay=NAME:US[,NAME:US...]: debug builds widen the named race windows
// (kernel/debugdelay.h) by US microseconds. The parser checks the form; the
// kernel checks the names.
#define CMDLINE_DELAYS_MAX 8
#define CMDLINE_DELAY_NAME_MAX 32
#define CMDLINE_DELAY_US_MAX 1000000
struct cmdline_delay {
    char name[CMDLINE_DELAY_NAME_MAX];
    uint32_t us;
};

// inject=: a fault made on purpose, to prove that each ends in its named
// diagnosis and a non-zero exit, never a hang or a reboot (kernel/inject.c,
// docs/testing.md).
enum inject_fault {
    INJECT_NONE,
    INJECT_AP_SILENT,       // ap-silent[:APICID]: that AP never answers INIT-SIPI-SIPI (default 1)
    INJECT_ACPI,            // acpi:SIG: table SIG (or RSDP) corrupted before it is parsed
    INJECT_NODE_FULL,       // node-full[:N]: node N's pages all taken when the app starts (default 0)
    INJECT_STACK_FULL,      // stack-full: the goroutine stack region full when the app starts
    INJECT_TICKETS,         // tickets:N: the APs' broadcast start has N tickets (the loader's line only)
    INJECT_EVICT,           // evict:S: ... S slots; an AP must leave its slot to a planned one (the same)
};

// gomaxprocs='s bound: MAX_CPUS (arch/arch.h; this header stays host-pure,
// kernel/proc.c checks the two agree).
#define CMDLINE_GOMAXPROCS_MAX 1024

struct kparams {
    char app[32];               // "" when no app= was given
    int argc;                   // application's argc, argv[0] = app name
    char *argv[CMDLINE_ARGV_MAX + 1];   // point into buf; argv[argc] = NULL
    int gomaxprocs;             // 0: one per core (default); else 1..CMDLINE_GOMAXPROCS_MAX
    uint64_t quantum_ns;        // 20us..1s, default 10ms; accepts us, ms, s
    uint64_t schedtrace_ns;     // 0 = off (default); plain number = ms as Go
    bool scheddetail;           // 0/1
    bool trace;                 // 0/1
    uint32_t profile_hz;        // profile=HZ: 0 = off (default), else 100..10000
    bool metrics;               // metrics=1: the scheduler metrics printed at exit
    enum steal_policy steal;    // numa|flat, default numa
    enum idle_policy idle;      // hlt|mwait|poll, default hlt
    bool numa;                  // numa=on|off, default on
    bool seed_given;
    uint64_t seed;              // seed=N (decimal or 0x hex)
    bool simd;                  // simd=on|off, default on: off leaves SSE/AVX disabled
    int ndelays;                // delay=: debug builds' widened windows
    struct cmdline_delay delays[CMDLINE_DELAYS_MAX];
    enum inject_fault inject;   // inject=..., default none
    uint32_t inject_arg;        // its APIC id or node
    char inject_sig[5];         // its ACPI signature ("APIC", "RSDP", ...)
    const char *script;         // script=: the shell's first commands (';' between them); NULL: none
    bool boot_timeline;         // 0/1: every core's online moment after the timeline line
    uint64_t init_delay_ns;     // wait after INIT: INIT_DELAY_AUTO (by CPU) or 0..100ms
    uint64_t ap_timeout_ns;     // how long the APs get to come online: 1us..10s, default 2s
    enum nic_irq nic_irq;       // msix (default), msi, intx or none
    uint32_t ip_addr;           // ip=A.B.C.D/N: the first NIC's static address (host order); 0: DHCP
    uint8_t ip_prefix;          // its N
    uint32_t ip_gw;             // gw=A.B.C.D (host order); 0: none
    char buf[CMDLINE_MAX];      // private: the words, split
};

typedef void (*cmdline_warn_fn)(void *ctx, const char *msg);

// Fills *p with the defaults, then applies line. Never fails: every bad
// word produces one warning and is ignored. Returns the number of warnings.
int cmdline_parse(const char *line, struct kparams *p, cmdline_warn_fn warn, void *ctx);

// Whether a word of line (words are separated by blanks) starts with
// prefix, before any parse: for the keys the boot acts on before it parses
// the line (kernel/main.c). A word inside an application's arguments counts
// too, so a caller takes a hit as the cautious answer. prefix is not empty.
bool cmdline_has_word(const char *line, const char *prefix);

// The same look, for a number right after prefix ("inject=tickets:" and
// "2" in "inject=tickets:2"): the first word that starts with prefix and
// goes on with decimal digits to its end. Returns false if there is none.
bool cmdline_word_number(const char *line, const char *prefix, uint64_t *out);

// Parses a duration "250us", "10ms", "1s", or a bare number of default_unit_ns.
// Returns false on a malformed value or overflow.
bool cmdline_duration(const char *s, uint64_t default_unit_ns, uint64_t *out_ns);

extern struct kparams kparams;

#endif
