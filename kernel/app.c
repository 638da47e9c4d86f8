// SPDX-License-Identifier: MIT
#include "kernel/app.h"
#include "kernel/cmdline.h"
#include "lib/printf.h"
#include "lib/string.h"

#define DEFAULT_APP "hello"
#define SCRIPT_APP "shell"          // script= without app= means the shell

extern const struct goro_app __apps_start[], __apps_end[];

const struct goro_app *app_find(const char *name)
{
    // cppcheck-suppress comparePointers ; the linker script's bounds of one section
    for (const struct goro_app *a = __apps_start; a < __apps_end; a++)
        if (strcmp(a->name, name) == 0)
            return a;
    return 0;
}

size_t app_count(void)
{
    // cppcheck-suppress [comparePointers, subtractPointers] ; the linker script's bounds of one section
    return (size_t)(__apps_end - __apps_start);
}

const struct goro_app *app_at(size_t i)
{
    return i < app_count() ? &__apps_start[i] : 0;
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
    const char *name = kparams.app[0] ? kparams.app : kparams.script ? SCRIPT_APP : DEFAULT_APP;
    char *default_argv[] = { (char *)name, 0 };
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

// Written once by the shell before it runs an app, read by exit().
static bool (*exit_catcher)(int code);

void app_set_exit_catcher(bool (*catcher)(int code))
{
    __atomic_store_n(&exit_catcher, catcher, __ATOMIC_RELEASE);    // pairs with exit()'s acquire
}

bool app_exit_caught(int code)
{
    bool (*c)(int) = __atomic_load_n(&exit_catcher, __ATOMIC_ACQUIRE);    // acquire: pairs with the release above
    return c && c(code);
}
