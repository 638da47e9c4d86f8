// SPDX-License-Identifier: MIT

#include "textflag.h"

// insncount's marker NOPs 1 and 2 (tools/insncount): nopl 0xFEED0001(%rax)
// and nopl 0xFEED0002(%rax), an ordinary NOP anywhere else.

// func mark1()
TEXT ·mark1(SB), NOSPLIT, $0-0
	BYTE $0x0f; BYTE $0x1f; BYTE $0x80; BYTE $0x01; BYTE $0x00; BYTE $0xed; BYTE $0xfe
	RET

// func mark2()
TEXT ·mark2(SB), NOSPLIT, $0-0
	BYTE $0x0f; BYTE $0x1f; BYTE $0x80; BYTE $0x02; BYTE $0x00; BYTE $0xed; BYTE $0xfe
	RET
