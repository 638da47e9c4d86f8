// SPDX-License-Identifier: MIT
// In-kernel tests of the boot floor: formatting, memory, cores, time.
#include "kernel/ktest.h"
#include "arch/arch.h"
#include "drivers/acpi.h"
#include "kernel/page.h"
#include "lib/printf.h"
#include "lib/string.h"

KTEST(printf_formats)
{
    char buf[96];
    snprintf(buf, sizeof buf, "%d|%5d|%-4d|%05d|%x|%lu|%s|%c|%%|%.2s", -42, 7, 3, -12, 0xbeefu,
             18446744073709551615ul, "str", 'c', "abc");
    KT_ASSERT(strcmp(buf, "-42|    7|3   |-0012|beef|18446744073709551615|str|c|%|ab") == 0);
    KT_ASSERT_EQ(snprintf(buf, 4, "%s", "truncated"), 9);
    KT_ASSERT(strcmp(buf, "tru") == 0);
}

// Out of line, so that no vector instruction is scheduled before the
// simd check in the test.
__attribute__((noinline)) static int print_floats(void)
{
    return printf("ktest: float check %.3f %f %.1e %g\n", 3.14159, -0.5, 12345.0, 0.25);
}

KTEST(printf_float)
{
    if (!arch_simd_enabled)
        KT_SKIP("simd=off: no vector registers");
    // "ktest: float check 3.142 -0.500000 1.2e+04 0.25\n" is 48 characters.
    KT_ASSERT_EQ(print_floats(), 48);
}

KTEST(page_alloc_free)
{
    uint64_t before = page_free_count();
    uint8_t *p = page_alloc(3);
    KT_ASSERT(p != 0);
    KT_ASSERT(((uintptr_t)p & (PAGE_SIZE - 1)) == 0);
    for (size_t i = 0; i < 3 * PAGE_SIZE; i++)
        if (p[i])
            KT_FAIL("page_alloc returned non-zeroed memory at byte %lu", i);
    memset(p, 0xAB, 3 * PAGE_SIZE);
    KT_ASSERT_EQ(page_free_count(), before - 3);
    page_free(p, 3);
    KT_ASSERT_EQ(page_free_count(), before);
}

KTEST(cores_online)
{
    KT_ASSERT(num_cpu() >= 1);
    for (int i = 0; i < num_cpu(); i++)
        KT_ASSERT(arch_cpu((uint32_t)i)->online);
    KT_ASSERT_EQ(core_id(), (int)cpu_index());
}

KTEST(time_advances)
{
    uint64_t hz = arch_tsc_hz();
    KT_ASSERT(hz > 100000000ull);          // a TSC slower than 100 MHz is a bad calibration
    uint64_t t0 = nanotime();
    while (nanotime() - t0 < 1000000)      // 1 ms
        cpu_relax();
    KT_ASSERT(nanotime() - t0 >= 1000000);
}

// ---- the boot found what the firmware listed ------------------------------

// Every enabled core the MADT lists is online (the boot log names one that
// did not answer INIT-SIPI-SIPI). inject=ap-silent makes this fail.
KTEST(boot_every_madt_core_online)
{
    uint32_t listed = 0, missing = 0, first_missing = 0;
    for (uint32_t i = 0; i < acpi.cpu_count && listed < MAX_CPUS; i++) {
        if (!acpi.cpus[i].enabled)
            continue;
        listed++;
        bool online = false;
        for (int c = 0; c < num_cpu() && !online; c++)
            online = arch_cpu((uint32_t)c)->apic_id == acpi.cpus[i].apic_id;
        if (!online && missing++ == 0)
            first_missing = acpi.cpus[i].apic_id;
    }
    if (missing)
        KT_FAIL("%u of the MADT's %u cores are not online, the first with APIC id %u "
                "(the boot log says why)", missing, listed, first_missing);
}

// The cores are numbered in the MADT's order, whatever order they came up
// in (under a hypervisor every AP is started at once and takes its slot in
// the order it reaches the trampoline): cores 1, 2, ... have the APIC ids
// of the MADT's enabled cores after the boot core's, in order, less the
// ones that did not come up; and each knows its own number.
KTEST(boot_cores_numbered_in_madt_order)
{
    uint32_t next = 1, boot_apic = arch_cpu(0)->apic_id;
    for (uint32_t i = 0; i < acpi.cpu_count && next < (uint32_t)num_cpu(); i++)
        if (acpi.cpus[i].enabled && acpi.cpus[i].apic_id != boot_apic &&
            arch_cpu(next)->apic_id == acpi.cpus[i].apic_id)
            next++;
    if (next != (uint32_t)num_cpu())
        KT_FAIL("core %u (APIC id %u) is out of the MADT's order", next, arch_cpu(next)->apic_id);
    for (int c = 0; c < num_cpu(); c++)
        KT_ASSERT(arch_cpu((uint32_t)c)->index == (uint32_t)c);
}

// Device interrupts are aimed at cores a device's message can name (APIC
// id below 256: arch_irq_cpu, docs/design.md): every core's choice can be
// named, a core that can be named keeps its own, and one that cannot gets
// the same stand-in each time, whose message names it.
KTEST(irq_cpu_names_a_core_below_256)
{
    uint32_t n = (uint32_t)num_cpu(), beyond = 0;
    for (uint32_t c = 0; c < n; c++) {
        uint32_t to = arch_irq_cpu(c);
        KT_ASSERT(to < n && arch_cpu(to)->apic_id <= 255);
        if (arch_cpu(c)->apic_id <= 255) {
            KT_ASSERT_EQ(to, c);
            continue;
        }
        beyond++;
        KT_ASSERT_EQ(arch_irq_cpu(c), to);
        uint64_t addr;
        uint32_t data;
        arch_msi_message(to, ARCH_DEV_VEC_FIRST, &addr, &data);
        KT_ASSERT_EQ((addr >> 12) & 0xFF, arch_cpu(to)->apic_id);
    }
    if (!beyond)
        KT_SKIP("no core above APIC id 255");
}

// No ACPI table had to be ignored or cut short. inject=acpi:SIG makes this
// fail, naming the table.
KTEST(boot_acpi_tables_parse_cleanly)
{
    const char *first;
    uint32_t n = acpi_boot_warnings(&first);
    if (n)
        KT_FAIL("%u ACPI warning(s), the first: %s", n, first);
}

// memset and memcpy move 8 bytes a step and then the tail: every length and
// misalignment up to a few words, and nothing written outside.
KTEST(mem_fill_and_copy)
{
    static uint8_t buf[96], src[96];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 7 + 1);
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; n <= 40; n++) {
            memset(buf, 0xEE, sizeof buf);
            memset(buf + off, 0x5A, n);
            for (size_t i = 0; i < sizeof buf; i++)
                if (buf[i] != (i >= off && i < off + n ? 0x5A : 0xEE))
                    KT_FAIL("memset(+%lu, %lu): byte %lu is %#x", off, n, i, buf[i]);
            memset(buf, 0xEE, sizeof buf);
            memcpy(buf + off, src + (n % 8), n);
            for (size_t i = 0; i < sizeof buf; i++)
                if (buf[i] != (i >= off && i < off + n ? src[n % 8 + i - off] : 0xEE))
                    KT_FAIL("memcpy(+%lu, %lu): byte %lu is %#x", off, n, i, buf[i]);
        }
}
