// SPDX-License-Identifier: MIT
// The shell's loop and its command table (shell/shell.h). The boot
// script's commands run first, each shown after the prompt as if typed;
// then the console's lines, edited with history (shell/lineedit.h).
#include "shell/shell.h"
#include "kernel/app.h"
#include "kernel/cmdline.h"
#include "shell/console_in.h"
#include "shell/lineedit.h"
#include "lib/printf.h"
#include "lib/string.h"

#define PROMPT "goro> "
#define SHELL_LINE_MAX 256

static int cmd_help(int argc, char **argv);

static const struct shell_cmd cmds[] = {
    { "help", "[COMMAND]", "list the commands, or describe one", cmd_help },
    { "run", "APP [ARGS...]", "run an app as a goroutine: its exit value and what it left behind",
      shell_cmd_run },
    { "bench", "[FILTER] [ARGS...]", "run the benchmark apps, filter=FILTER (quick=1 is shorter)",
      shell_cmd_bench },
    { "ps", "", "every goroutine: state, wait reason, creator, P, run time, entry", shell_cmd_ps },
    { "sched", "", "Ps: queues, runnext, steals, wake IPIs, halts, spinning; the SCHED line",
      shell_cmd_sched },
    { "metrics", "", "the scheduler's counters", shell_cmd_metrics },
    { "gomaxprocs", "[N]", "show or set the number of Ps", shell_cmd_gomaxprocs },
    { "quantum", "[DUR]", "show or set the time slice, 20us..1s (us, ms, s)", shell_cmd_quantum },
    { "steal", "[numa|flat]", "show or set the order in which Ps steal", shell_cmd_steal },
    { "trace", "on|off|dump", "the event trace: record, stop recording, print and clear",
      shell_cmd_trace },
    { "profile", "start HZ|stop", "the sampling CPU profiler (docs/observability.md)", shell_cmd_profile },
    { "numa", "", "nodes: cores, memory ranges, distances, free pages", shell_cmd_numa },
    { "mem", "", "page pools per node, malloc size classes", shell_cmd_mem },
    { "cpus", "", "cores: APIC ids, nodes, TSC, timer mode, what each runs", shell_cmd_cpus },
    { "pci", "[-v]", "PCI functions: ids, class, driver, capabilities (-v: BARs and interrupts)",
      shell_cmd_pci },
    { "net", "", "NICs: MAC, link, queues, their cores, vectors and counters", shell_cmd_net },
    { "halt", "[CODE]", "stop the machine with exit code CODE (default 0)", shell_cmd_halt },
    { "reboot", "", "reset the machine", shell_cmd_reboot },
};
#define NCMDS (sizeof cmds / sizeof cmds[0])

static const struct shell_cmd *find_cmd(const char *name)
{
    for (size_t i = 0; i < NCMDS; i++)
        if (strcmp(cmds[i].name, name) == 0)
            return &cmds[i];
    return 0;
}

static int cmd_help(int argc, char **argv)
{
    if (argc > 1) {
        const struct shell_cmd *c = find_cmd(argv[1]);
        if (!c) {
            kprintf("help: no command \"%s\"\n", argv[1]);
            return 1;
        }
        kprintf("%s %s\n    %s\n", c->name, c->usage, c->help);
        return 0;
    }
    for (size_t i = 0; i < NCMDS; i++) {
        char head[40];
        snprintf(head, sizeof head, "%s %s", cmds[i].name, cmds[i].usage);
        kprintf("  %-26s %s\n", head, cmds[i].help);
    }
    kprintf("Keys: Left/Right, Home/End, Backspace/Delete, Ctrl-U, Up/Down (history); Ctrl-C\n"
           "gives the prompt back while an app runs. \"run\" alone lists the apps.\n");
    return 0;
}

// Splits line into words in place; returns how many (at most max).
static int split(char *line, char **words, int max)
{
    int n = 0;
    char *s = line;
    for (;;) {
        while (*s == ' ' || *s == '\t')
            *s++ = 0;
        if (!*s || n == max)
            return n;
        words[n++] = s;
        while (*s && *s != ' ' && *s != '\t')
            s++;
    }
}

static int last_status;

static void execute(char *line)
{
    char *words[SHELL_MAX_WORDS + 1];
    int n = split(line, words, SHELL_MAX_WORDS);
    if (n == 0 || words[0][0] == '#')
        return;
    words[n] = 0;
    const struct shell_cmd *c = find_cmd(words[0]);
    if (!c) {
        kprintf("shell: no command \"%s\" (help lists them)\n", words[0]);
        last_status = 1;
        return;
    }
    last_status = c->fn(n, words);
}

int shell_cmd_halt(int argc, char **argv)
{
    uint64_t code = 0;
    if (argc > 1 && (!shell_parse_u64(argv[1], &code) || code > 15)) {
        kprintf("halt: CODE is 0..15\n");
        return 1;
    }
    kprintf("shell: halting, exit code %lu\n", code);
    machine_exit((int)code);
}

static int shell_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    static struct lineedit_history hist;
    char line[SHELL_LINE_MAX];
    shell_run_init();
    bool input = console_input_start();
    console_fg_shell();
    kprintf("goro shell: %d cores, gomaxprocs=%d; \"help\" lists the commands\n", num_cpu(),
           gomaxprocs(0));
    while (shell_script_next(line, sizeof line)) {
        kprintf(PROMPT "%s\n", line);
        execute(line);
    }
    for (;;) {
        int n = input ? console_edit_line(PROMPT, line, sizeof line, &hist) : -1;
        if (n == -1) {
            kprintf("shell: no console input to read commands from: halting\n");
            machine_exit(last_status);
        }
        if (n < 0)
            continue;               // Ctrl-C: a fresh prompt
        lineedit_history_add(&hist, line);
        execute(line);
    }
}
GORO_APP(shell, "a console: run apps, inspect the scheduler, change settings (help lists commands)",
         shell_main);

// ---- helpers -----------------------------------------------------------------

bool shell_parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return true;
}

bool shell_parse_duration(const char *s, uint64_t *ns)
{
    return cmdline_duration(s, 0, ns) && *ns;      // a bare number has no unit: rejected
}

void shell_fmt_ns(char *buf, size_t cap, uint64_t ns)
{
    static const struct { uint64_t div; const char *unit; } units[] = {
        { 1000000000, "s" }, { 1000000, "ms" }, { 1000, "us" },
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        uint64_t d = units[i].div;
        if (ns + d / 20 < d)        // below 0.95 of the unit: a smaller one
            continue;
        uint64_t tenths = (ns + d / 20) / (d / 10);    // rounded to a tenth
        if (tenths < 1000)
            snprintf(buf, cap, "%lu.%lu %s", tenths / 10, tenths % 10, units[i].unit);
        else
            snprintf(buf, cap, "%lu %s", (ns + d / 2) / d, units[i].unit);
        return;
    }
    snprintf(buf, cap, "%lu ns", ns);
}

void shell_fmt_bytes(char *buf, size_t cap, uint64_t bytes)
{
    if (bytes >= 10ull << 30)
        snprintf(buf, cap, "%lu GiB", bytes >> 30);
    else if (bytes >= 10ull << 20)
        snprintf(buf, cap, "%lu MiB", bytes >> 20);
    else if (bytes >= 10ull << 10)
        snprintf(buf, cap, "%lu KiB", bytes >> 10);
    else
        snprintf(buf, cap, "%lu B", bytes);
}
