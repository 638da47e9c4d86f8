// SPDX-License-Identifier: MIT
// <stdio.h> for lwIP's sources (-nostdinc): snprintf (lwIP 2.2's heap
// checks), from goro's formatter.
#ifndef GORO_LWIP_LIBC_STDIO_H
#define GORO_LWIP_LIBC_STDIO_H
#include "lib/printf.h"
#endif
