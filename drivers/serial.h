// SPDX-License-Identifier: MIT
#ifndef GORO_SERIAL_H
#define GORO_SERIAL_H
#include <stddef.h>

void serial_init(void);
// Writes n bytes to COM1, "\n" as "\r\n". Polls; callers serialize.
void serial_write(const char *s, size_t n);

#endif
