// SPDX-License-Identifier: MIT
// <string.h> for lwIP's sources, which are compiled without the host's C
// library headers (-nostdinc): goro's own string functions.
#ifndef GORO_LWIP_LIBC_STRING_H
#define GORO_LWIP_LIBC_STRING_H
#include "lib/string.h"
#endif
