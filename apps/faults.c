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

// The stack pointer at an address nothing maps (canonical, outside the
// direct map and the goroutine stacks), then a push: a #PF whose rsp is
// wild. The dump must not read the word at rsp (a second fault inside the
// dump, on the same IST stack, overwrote the report's frames and printed
// a second report instead of this one's backtrace).
__attribute__((noinline)) static void push_at_wild_rsp(void)
{
    __asm__ volatile("mov %%rsp, %%rbx\n\t"
                     "movabs $0x7ff000000000, %%rsp\n\t"
                     "push %%rax\n\t"
                     "mov %%rbx, %%rsp"
                     ::: "rbx", "memory");
}

static int fault_wild_rsp_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    printf("fault_wild_rsp: pushing with the stack pointer at an unmapped address\n");
    push_at_wild_rsp();
    return 0;
}
GORO_APP(fault_wild_rsp, "push with a wild stack pointer (expect one #PF dump with its backtrace, exit 255)",
         fault_wild_rsp_main);

// A panic whose message faults as it is printed: a fault inside the fatal
// report prints one line naming it and ends the machine.
static int panic_bad_string_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    printf("panic_bad_string: a panic message that reads an unmapped address\n");
    panic("the message is %s", (const char *)0x7ff000000000ull);
}
GORO_APP(panic_bad_string, "panic with a message that faults as it prints (expect one line for the fault, exit 255)",
         panic_bad_string_main);

static int panic_main(int argc, char **argv)
{
    (void)argv;
    panic("deliberate panic with %d argument(s)", argc - 1);
}
GORO_APP(panic, "call panic() (expect exit 255)", panic_main);
