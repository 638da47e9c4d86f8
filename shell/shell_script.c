// SPDX-License-Identifier: MIT
// The shell's boot script: the command line's script= value, then QEMU's
// fw_cfg file opt/goro/script, one command per line or between ';'. A line
// starting with '#' is a comment up to its newline. A whole experiment can
// so be one boot: `-fw_cfg name=opt/goro/script,file=experiment.txt`, or
// script="gomaxprocs 1; run bench quick=1; halt" in goro.cmdline.
#include "shell/shell.h"
#include "drivers/fw_cfg.h"
#include "kernel/cmdline.h"
#include "lib/printf.h"

#define FW_SCRIPT_MAX 8192

static char fw_script[FW_SCRIPT_MAX];   // written at boot, read by the shell goroutine

void shell_script_load(void)
{
    size_t n = 0;
    if (fw_cfg_read_file("opt/goro/script", fw_script, sizeof fw_script - 1, &n) && n) {
        kprintf("shell: a script of %lu bytes in fw_cfg opt/goro/script%s\n", n,
                n == sizeof fw_script - 1 ? " (cut: longer than the buffer)" : "");
    }
    fw_script[n] = 0;
}

// The shell goroutine only: where the script has got to.
static int source;                  // 0: script=, 1: fw_cfg, 2: done
static const char *at;

bool shell_script_next(char *buf, size_t cap)
{
    for (;;) {
        if (!at || !*at) {
            if (source == 2)
                return false;
            at = source++ == 0 ? kparams.script : fw_script;
            if (!at)
                continue;
        }
        while (*at == ' ' || *at == '\t' || *at == '\r' || *at == '\n' || *at == ';')
            at++;
        if (!*at)
            continue;
        const char *end = at;
        if (*at == '#') {
            while (*end && *end != '\n')
                end++;
            at = end;
            continue;
        }
        while (*end && *end != ';' && *end != '\n')
            end++;
        size_t n = 0;
        for (const char *s = at; s < end && n + 1 < cap; s++)
            buf[n++] = *s == '\t' || *s == '\r' ? ' ' : *s;
        while (n && buf[n - 1] == ' ')
            n--;
        buf[n] = 0;
        at = end;
        if (n)
            return true;
    }
}
