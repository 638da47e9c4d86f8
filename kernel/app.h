// SPDX-License-Identifier: MIT
// The application registry: GORO_APP entries collected in .goro_apps, and
// what happens when an application ends.
#ifndef GORO_APP_H
#define GORO_APP_H
#include <stdbool.h>
#include <stddef.h>
#include "goro.h"

const struct goro_app *app_find(const char *name);
// The registered apps in link order: index 0..app_count()-1.
size_t app_count(void);
const struct goro_app *app_at(size_t i);
void app_list(void);
// Runs the main goroutine's body: the application named on the command
// line (the shell when there is only a script=, else the default demo).
// Returns main's return value.
int app_run_main(void);

// exit() (goro.h) first offers its code to the catcher, when one is set:
// the shell sets one so that an app's exit() ends the calling goroutine
// instead of the machine. catcher returns true when it took the call;
// exit() then calls goexit(). Set once, before any app runs.
void app_set_exit_catcher(bool (*catcher)(int code));
// exit()'s question: true when the catcher took code.
bool app_exit_caught(int code);
// Ends the machine with code, as exit() does when nothing catches it.
void machine_exit(int code) __attribute__((noreturn));

#endif
