// SPDX-License-Identifier: MIT
#include "kernel/app.h"
#include "kernel/cmdline.h"
#include "lib/printf.h"
#include "lib/string.h"

#define DEFAULT_APP "hello"

extern const struct goro_app __apps_start[], __apps_end[];

const struct goro_app *app_find(const char *name)
{
    // cppcheck-suppress comparePointers ; the linker script's bounds of one section
    for (const struct goro_app *a = __apps_start; a < __apps_end; a++)
        if (strcmp(a->name, name) == 0)
            return a;
    return 0;
}

void app_list(void)
{
    kprintf("applications:\n");
    // cppcheck-suppress comparePointers ; the linker script's bounds of one section
    for (const struct goro_app *a = __apps_start; a < __apps_end; a++)
        kprintf("  %-14s %s\n", a->name, a->help);
}

int app_run_main(void)
{
    static char *default_argv[] = { DEFAULT_APP, 0 };
    const char *name = kparams.app[0] ? kparams.app : DEFAULT_APP;
    const struct goro_app *a = app_find(name);
    if (!a) {
        kprintf("goro: no application named \"%s\"\n", name);
        app_list();
        return 2;
    }
    kprintf("goro: running %s\n", a->name);
    if (kparams.app[0])
        return a->main(kparams.argc, kparams.argv);
    return a->main(1, default_argv);
}
