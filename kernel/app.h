// SPDX-License-Identifier: MIT
// The application registry: GORO_APP entries collected in .goro_apps.
#ifndef GORO_APP_H
#define GORO_APP_H
#include "kernel/goro.h"

const struct goro_app *app_find(const char *name);
void app_list(void);
// Runs the main goroutine's body: the application named on the command
// line, or the default demo. Returns main's return value.
int app_run_main(void);

#endif
