// SPDX-License-Identifier: MIT
// The local APIC: x2APIC mode (MSRs) when the CPU has it, xAPIC (MMIO at
// the base in IA32_APIC_BASE) otherwise. The rest of arch/ sees one set of
// calls; only lapic_read/lapic_write know which mode is on.
#include "arch/arch_private.h"
#include "arch/x86.h"
#include "lib/panic.h"

#define APIC_BASE_EN   (1ull << 11)
#define APIC_BASE_EXTD (1ull << 10)

enum {
    REG_ID = 0x20, REG_TPR = 0x80, REG_EOI = 0xB0, REG_SVR = 0xF0, REG_ISR = 0x100, REG_IRR = 0x200,
    REG_ICR_LO = 0x300, REG_ICR_HI = 0x310,
    REG_LVT_TIMER = 0x320, REG_LVT_LINT0 = 0x350, REG_LVT_LINT1 = 0x360, REG_LVT_ERROR = 0x370,
    REG_TIMER_INIT = 0x380, REG_TIMER_CUR = 0x390, REG_TIMER_DIV = 0x3E0,
};
#define LVT_MASKED (1u << 16)
#define ICR_PENDING (1u << 12)

static bool x2apic;
static volatile uint32_t *mmio;

bool lapic_x2apic(void)
{
    return x2apic;
}

bool arch_x2apic(void)
{
    return x2apic;
}

static uint32_t lapic_read(uint32_t reg)
{
    if (x2apic)
        return (uint32_t)rdmsr(0x800 + (reg >> 4));
    return mmio[reg / 4];
}

static void lapic_write(uint32_t reg, uint32_t v)
{
    if (x2apic)
        wrmsr(0x800 + (reg >> 4), v);
    else
        mmio[reg / 4] = v;
}

uint32_t lapic_id(void)
{
    uint32_t id = lapic_read(REG_ID);
    return x2apic ? id : id >> 24;
}

static void pic_disable(void)
{
    // Remap the 8259s away from the exception vectors, then mask them all:
    // a spurious IRQ 7 must not look like #NM.
    outb(0x20, 0x11); outb(0xA0, 0x11);
    outb(0x21, 0x20); outb(0xA1, 0x28);
    outb(0x21, 0x04); outb(0xA1, 0x02);
    outb(0x21, 0x01); outb(0xA1, 0x01);
    outb(0x21, 0xFF); outb(0xA1, 0xFF);
}

// Every core: the APIC on, in the boot core's mode, and software-enabled
// (the go nudge and the scheduler's wake-ups are fixed IPIs). An AP calls
// nothing else here on its way to checking in: it runs only after the boot
// core's INIT and STARTUP, and INIT leaves the local APIC as at power-up
// but for its ID (SDM vol. 3A, "Local APIC State After an INIT Reset"):
// TPR 0, every LVT masked (the timer's is set when the timer is armed;
// LINT1 stays masked, the external NMI being the boot core's, as Linux
// has it), ISR empty. Under TCG every local APIC access takes QEMU's
// global lock, which the APs queue for one after another: one access
// here where lapic_init makes eight (docs/boot.md). Not inlined: the boot
// core runs it first, and under TCG the APs then run its translation.
__attribute__((noinline)) void lapic_enable(void)
{
    uint64_t base = rdmsr(MSR_APIC_BASE) | APIC_BASE_EN;
    if (x2apic)
        base |= APIC_BASE_EXTD;
    wrmsr(MSR_APIC_BASE, base);
    lapic_write(REG_SVR, 0x100 | VEC_SPURIOUS);
}

// The boot core, which decides the mode the APs follow. The firmware may
// have left anything in its registers: every one the kernel relies on is
// written.
void lapic_init(void)
{
    ASSERT(cpu_index() == 0);
    x2apic = cpuid(1, 0).ecx & (1u << 21);
    mmio = (volatile uint32_t *)(rdmsr(MSR_APIC_BASE) & 0xFFFFF000ull);
    pic_disable();
    lapic_enable();
    // One loop, not a write each: lapic_write's two modes once, not six
    // times, on the boot's first page (boot/text_order.txt).
    static const uint32_t regs[][2] = {
        { REG_TPR, 0 },
        { REG_LVT_TIMER, LVT_MASKED | VEC_TIMER },
        { REG_LVT_LINT0, LVT_MASKED },
        { REG_LVT_LINT1, 0x400 },               // NMI: the external NMI pin is the boot core's
        { REG_LVT_ERROR, LVT_MASKED },
        { REG_EOI, 0 },
    };
    for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++)
        lapic_write(regs[i][0], regs[i][1]);
    this_cpu()->apic_id = lapic_id();
}

void lapic_eoi(void)
{
    lapic_write(REG_EOI, 0);
}

// The highest vector set in one of the APIC's 256-bit registers (eight
// 32-bit words, 0x10 apart), 0 when none.
static uint32_t highest_vector(uint32_t reg)
{
    for (uint32_t i = 8; i-- > 0;) {
        uint32_t bits = lapic_read(reg + i * 0x10);
        if (bits)
            return i * 32 + 31 - (uint32_t)__builtin_clz(bits);
    }
    return 0;
}

uint32_t arch_irq_in_service(void)
{
    return highest_vector(REG_ISR);
}

uint32_t arch_irq_pending(void)
{
    return highest_vector(REG_IRR);
}

// Sends one IPI. In xAPIC mode the ICR is two registers, so interrupts are
// off between the writes: a handler that sends an IPI in between would
// redirect this one. Every store before the call is visible to the target
// before the IPI arrives: the xAPIC's uncached MMIO write is ordered after
// them, but the x2APIC's ICR is an MSR whose write does not wait for the
// store buffer to drain (Intel SDM 11.12.3), hence the fence.
void lapic_send(uint32_t apic_id, uint32_t icr_low)
{
    uint64_t f = irq_save();
    if (x2apic) {
        __asm__ volatile("mfence; lfence" ::: "memory");
        wrmsr(0x830, ((uint64_t)apic_id << 32) | icr_low);
    } else {
        while (lapic_read(REG_ICR_LO) & ICR_PENDING)
            cpu_relax();
        lapic_write(REG_ICR_HI, apic_id << 24);
        lapic_write(REG_ICR_LO, icr_low);
    }
    irq_restore(f);
}

void arch_send_ipi(uint32_t cpu, uint8_t vector)
{
    lapic_send(cpu_of[cpu]->apic_id, ICR_FIXED | ICR_ASSERT | vector);
}

void arch_send_ipi_all_but_self(uint8_t vector)
{
    lapic_send(0, ICR_FIXED | ICR_ASSERT | ICR_ALL_BUT_SELF | vector);
}

// One-shot APIC timer, for calibration now and the tickless timer later.
void lapic_timer_oneshot(uint32_t count, uint8_t vector)
{
    lapic_write(REG_TIMER_DIV, 0xB);            // divide by 1
    lapic_write(REG_LVT_TIMER, vector);
    lapic_write(REG_TIMER_INIT, count);
}

// TSC-deadline mode (LVT timer mode 10b): the deadline MSR arms it.
void lapic_timer_deadline_mode(uint8_t vector)
{
    lapic_write(REG_LVT_TIMER, (2u << 17) | vector);
}

// Keeps the timer counting but never firing (calibration).
void lapic_timer_mask(void)
{
    lapic_write(REG_LVT_TIMER, LVT_MASKED | VEC_TIMER);
}

uint32_t lapic_timer_current(void)
{
    return lapic_read(REG_TIMER_CUR);
}

void lapic_timer_stop(void)
{
    lapic_write(REG_LVT_TIMER, LVT_MASKED | VEC_TIMER);
    lapic_write(REG_TIMER_INIT, 0);
}
