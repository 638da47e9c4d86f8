// SPDX-License-Identifier: MIT
// inject=: faults made on purpose, each to end in its named diagnosis and
// a non-zero exit (kernel/inject.c).
#ifndef GORO_INJECT_H
#define GORO_INJECT_H

// After the command line is parsed, before ACPI and the APs.
void inject_at_boot(void);
// On the main goroutine, just before the application's main.
void inject_at_app_start(void);

#endif
