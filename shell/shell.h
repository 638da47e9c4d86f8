// SPDX-License-Identifier: MIT
// The shell (app=shell): a console for real machines. One goroutine reads
// commands from the boot script (shell_script.c) and then from the console
// (COM1 and the PS/2 keyboard, shell/console_in.c), and runs them:
//   shell.c          the loop, the command table, help
//   shell_run.c      run and bench: apps as goroutines, exit() caught,
//                    what they leave behind
//   shell_sched.c    ps, sched, gomaxprocs, quantum, steal, trace, profile
//   shell_machine.c  numa, mem, cpus, halt, reboot
//   shell_metrics.c  metrics
//   shell_net.c      pci, net, and app=l2reflect
//   shell_script.c   the boot script
//   console_in.c     keys from COM1 and the keyboard, lineedit.c their lines
//   acpidump.c       app=acpidump, the firmware's tables as text
// The shell is kernel code, not an app: its commands read the scheduler's
// and the allocators' own structures, which goro.h does not and should not
// offer applications (docs/design.md, "The shell"). It sits above kernel/:
// kernel/ reaches it only from the boot table (shell_script_load).
#ifndef GORO_SHELL_H
#define GORO_SHELL_H

#include <stdbool.h>
#include <stdint.h>
#include "goro.h"

#define SHELL_MAX_WORDS 32

// The commands read fields that other cores write (the scheduler's, the
// allocators', the Gs') without stopping them, with SNAPSHOT
// (kernel/sched.h), as Go's schedtrace does.

// A command: fn(argc, argv) with argv[0] the command's name; returns 0 on
// success (the shell remembers the last status for `halt`).
struct shell_cmd {
    const char *name;
    const char *usage;              // the arguments, "" when none
    const char *help;               // one line
    int (*fn)(int argc, char **argv);
};

int shell_cmd_run(int argc, char **argv);
int shell_cmd_bench(int argc, char **argv);
int shell_cmd_ps(int argc, char **argv);
int shell_cmd_sched(int argc, char **argv);
int shell_cmd_gomaxprocs(int argc, char **argv);
int shell_cmd_quantum(int argc, char **argv);
int shell_cmd_steal(int argc, char **argv);
int shell_cmd_trace(int argc, char **argv);
int shell_cmd_profile(int argc, char **argv);
int shell_cmd_metrics(int argc, char **argv);
int shell_cmd_numa(int argc, char **argv);
int shell_cmd_mem(int argc, char **argv);
int shell_cmd_cpus(int argc, char **argv);
int shell_cmd_halt(int argc, char **argv);
int shell_cmd_reboot(int argc, char **argv);
int shell_cmd_pci(int argc, char **argv);
int shell_cmd_net(int argc, char **argv);

// shell_run.c: from shell_main, before the first command. exit() from
// any goroutine ends that goroutine from now on instead of the machine.
void shell_run_init(void);
// What a goroutine runs, for ps and the run reports: "main of APP (run
// N)" for the main goroutine of one of the latest runs, else the symbol
// of its entry function. The shell goroutine only.
struct g;
void shell_g_entry(struct g *gp, char *buf, size_t cap);

// shell_script.c. shell_script_load: boot core, before the other cores
// start (fw_cfg has one selector for all of them): keeps QEMU's fw_cfg
// file opt/goro/script. shell_script_next: the boot script's next command,
// copied into buf; false once it is done. The script is the command line's
// script= value, then opt/goro/script; ';' and newlines end commands, and
// lines starting with '#' are comments.
void shell_script_load(void);
bool shell_script_next(char *buf, size_t cap);

// Helpers for the commands (shell.c).
// A decimal number, the whole word; false otherwise.
bool shell_parse_u64(const char *s, uint64_t *out);
// A duration with its unit (us, ms, s) as the command line takes it.
bool shell_parse_duration(const char *s, uint64_t *ns);
// "1.5 ms", "230 us", "12 s": ns in the unit that keeps 1-3 leading digits.
void shell_fmt_ns(char *buf, size_t cap, uint64_t ns);
// "12 KiB", "3 MiB", "512 B".
void shell_fmt_bytes(char *buf, size_t cap, uint64_t bytes);

#endif
