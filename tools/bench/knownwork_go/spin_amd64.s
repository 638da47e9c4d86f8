// SPDX-License-Identifier: MIT

#include "textflag.h"

// func spin(n int64): n rounds of DECQ+JNZ, 2n+2 instructions with the
// load and the return.
TEXT ·spin(SB), NOSPLIT, $0-8
	MOVQ n+0(FP), CX
loop:
	DECQ CX
	JNZ loop
	RET
