// SPDX-License-Identifier: MIT
// Deliberate faults: the exception dump must name them and the machine must
// exit non-zero at once. The functions are kept out of line so that the
// backtrace shows them by name.
#include "goro.h"

__attribute__((noinline)) static void touch_unmapped(volatile uint64_t *p)
{
    *p = 0x60d;
}

static int fault_pf_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    printf("fault_pf: writing to an unmapped address\n");
    touch_unmapped((volatile uint64_t *)0x7ff000000000ull);
    return 0;
}
GORO_APP(fault_pf, "write to an unmapped address (expect a #PF dump, exit 255)", fault_pf_main);

__attribute__((noinline)) static void run_ud2(void)
{
    __asm__ volatile("ud2");
}

static int fault_ud_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    printf("fault_ud: executing ud2\n");
    run_ud2();
    return 0;
}
GORO_APP(fault_ud, "execute an invalid opcode (expect a #UD dump, exit 255)", fault_ud_main);

static int fault_null_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    printf("fault_null: reading through a NULL pointer\n");
    return (int)*(volatile int *)(uintptr_t)argc * 0 + *(volatile int *)0;
}
GORO_APP(fault_null, "read through NULL (page 0 is unmapped: expect a #PF)", fault_null_main);

static int panic_main(int argc, char **argv)
{
    (void)argv;
    panic("deliberate panic with %d argument(s)", argc - 1);
}
GORO_APP(panic, "call panic() (expect exit 255)", panic_main);
