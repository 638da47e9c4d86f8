// SPDX-License-Identifier: MIT
// app=echo: reads lines from the console and prints each back as
// "echo: <line>"; the line "quit" ends it with 0. The reads sleep in
// irq_wait on COM1's receive interrupt, so an idle echo costs no CPU.
#include "goro.h"

static bool is_quit(const char *s)
{
    const char *q = "quit";
    while (*q && *s == *q)
        s++, q++;
    return !*q && !*s;
}

static int echo_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    char line[256];
    printf("echo: ready (type a line; \"quit\" ends)\n");
    for (;;) {
        int n = console_read_line(line, sizeof line);
        if (n < 0) {
            printf("echo: the console has no input\n");
            return 1;
        }
        if (is_quit(line))
            return 0;
        printf("echo: %s\n", line);
    }
}
GORO_APP(echo, "echo console lines back until \"quit\" (reads by interrupt)", echo_main);
