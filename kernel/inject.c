// SPDX-License-Identifier: MIT
// inject=: faults made on purpose (kernel/cmdline.h lists them). Each must
// end in its named diagnosis and a non-zero exit, never a hang or a reboot;
// the matrix's inject-* configurations check the message and the status.
//
//   ap-silent[:APICID]  the AP never answers INIT-SIPI-SIPI (default APIC
//                       id 1): "smp: core with APIC id N did not come up",
//                       and ktest's boot_every_madt_core_online fails.
//   acpi:SIG            table SIG's checksum byte is flipped before it is
//                       parsed: the parser's warning names the table, and
//                       ktest's boot_acpi_tables_parse_cleanly fails.
//   node-full[:N]       every free page of node N is taken as the app
//                       starts: on one node the next allocation ends in
//                       "out of memory" with each node's usage.
//   stack-full          the goroutine stack region is used up as the app
//                       starts: the next new G ends in "fatal error: out of
//                       goroutine stacks".
//   tickets:N           the APs' broadcast start hands out N tickets, as
//                       when more vCPUs than slots race for them: the
//                       planned APs left out are started again by APIC id
//                       (arch/smp.c's second round), and every core comes
//                       up. Read from the loader's line before the start
//                       (kernel/main.c); through fw_cfg it comes too late,
//                       and says so. Not a fault that must fail: the
//                       diagnosis is the second round's "smp:" line.
//   evict:S             the same with S slots (S - 1 tickets), as on a
//                       machine of S cores, and the first ticket's holder
//                       left out of the plan: at S + 1 vCPUs the planned
//                       AP without a ticket takes that holder's slot once
//                       it has left it ("1 unplanned AP evicted"), and S
//                       cores come up.
//
// Each announces itself with an "inject:" line, so a log never hides it.
#include "kernel/inject.h"
#include "arch/arch.h"
#include "drivers/acpi.h"
#include "kernel/cmdline.h"
#include "kernel/numa.h"
#include "kernel/page.h"
#include "kernel/sched.h"
#include "lib/printf.h"

void inject_at_boot(void)
{
    switch (kparams.inject) {
    case INJECT_AP_SILENT:
        kprintf("inject: ap-silent: the core with APIC id %u will not answer INIT-SIPI-SIPI\n",
                kparams.inject_arg);
        arch_inject_ap_silent(kparams.inject_arg);
        break;
    case INJECT_ACPI:
        kprintf("inject: acpi: the %s table will be corrupted before it is parsed\n", kparams.inject_sig);
        acpi_inject_corrupt(kparams.inject_sig);
        break;
    case INJECT_TICKETS:
        if (arch_broadcast_tickets() && arch_broadcast_tickets() == kparams.inject_arg)
            kprintf("inject: tickets: the APs' broadcast start had %u ticket%s\n", kparams.inject_arg,
                    kparams.inject_arg == 1 ? "" : "s");
        else if (arch_broadcast_tickets() && arch_broadcast_tickets() < kparams.inject_arg)
            kprintf("inject: tickets: %u asked; the broadcast start had %u, one per slot\n",
                    kparams.inject_arg, arch_broadcast_tickets());
        else
            kprintf("inject: tickets: nothing limited: the APs were not started by one broadcast with the "
                    "loader's command line (not under a hypervisor, or the word came through fw_cfg)\n");
        break;
    case INJECT_EVICT:
        if (arch_broadcast_tickets() + 1 == kparams.inject_arg)
            kprintf("inject: evict: the APs' broadcast start had %u slots; the first ticket's holder leaves "
                    "the plan\n", kparams.inject_arg);
        else
            kprintf("inject: evict: nothing limited: the APs were not started by one broadcast with the "
                    "loader's command line (not under a hypervisor, or the word came through fw_cfg)\n");
        break;
    default:
        break;
    }
}

void inject_at_app_start(void)
{
    switch (kparams.inject) {
    case INJECT_NODE_FULL: {
        int node = (int)kparams.inject_arg;
        if (node >= numa_nodes()) {
            kprintf("inject: node-full: there is no node %d (%d nodes)\n", node, numa_nodes());
            break;
        }
        uint64_t n = page_node_take_all(node);
        kprintf("inject: node-full: took all %lu free pages of node %d\n", n, node);
        break;
    }
    case INJECT_STACK_FULL:
        stack_region_fill();
        kprintf("inject: stack-full: the goroutine stack region is used up\n");
        break;
    default:
        break;
    }
}
