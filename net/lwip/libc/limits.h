// SPDX-License-Identifier: MIT
// <limits.h> for lwIP's sources (-nostdinc): gcc's own reaches for the C
// library's with #include_next, so the limits come from the compiler's
// predefined macros instead.
#ifndef GORO_LWIP_LIBC_LIMITS_H
#define GORO_LWIP_LIBC_LIMITS_H
#define CHAR_BIT __CHAR_BIT__
#define SCHAR_MAX __SCHAR_MAX__
#define SHRT_MAX __SHRT_MAX__
#define USHRT_MAX (__SHRT_MAX__ * 2 + 1)
#define INT_MAX __INT_MAX__
#define INT_MIN (-__INT_MAX__ - 1)
#define UINT_MAX (__INT_MAX__ * 2u + 1u)
#define LONG_MAX __LONG_MAX__
#define LONG_MIN (-__LONG_MAX__ - 1l)
#define ULONG_MAX (__LONG_MAX__ * 2ul + 1ul)
#endif
