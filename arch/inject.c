// SPDX-License-Identifier: MIT
// inject=ap-silent (kernel/inject.c): the AP with this APIC id halts
// before it answers the boot core, as a dead core would. One predicate,
// which AP start-up consults before the AP reports itself.
// (inject=tickets:N is arch/smp.c's, arch_inject_tickets: the broadcast
// start reads it on the boot's first page.)
#include "arch/arch_private.h"

// Written by the boot core before the first INIT-SIPI-SIPI, read by APs
// after it: the IPIs order them. When every AP was started at once before
// the command line was whole (arch/smp.c), written before go and read
// after it: go orders them.
static uint32_t silent_apic = UINT32_MAX;

void arch_inject_ap_silent(uint32_t apic_id)
{
    silent_apic = apic_id;
}

bool ap_never_answers(uint32_t apic_id)
{
    return apic_id == silent_apic;
}
