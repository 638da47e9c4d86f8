// SPDX-License-Identifier: MIT
// app=demos: runs every demo_* application in turn; returns 0 only if each
// of them did.
#include "goro.h"

extern const struct goro_app __apps_start[], __apps_end[];

static int demos_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    int failed = 0, ran = 0;
    for (const struct goro_app *a = __apps_start; a < __apps_end; a++) {
        if (strncmp(a->name, "demo_", 5) != 0)
            continue;
        char *args[] = { (char *)a->name, 0 };
        int r = a->main(1, args);
        printf("demos: %s returned %d\n", a->name, r);
        ran++;
        failed += r != 0;
    }
    printf("demos: %d passed, %d failed\n", ran - failed, failed);
    return failed ? 1 : 0;
}
GORO_APP(demos, "run every demo_* application (the seeds' examples)", demos_main);
