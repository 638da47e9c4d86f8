// SPDX-License-Identifier: MIT
// Fuzzes drivers/acpi.c: the RSDP, the RSDT/XSDT, MADT, FADT and HPET as
// acpi_parse reads them, a table lookup as acpi_find_table makes it, and
// the BIOS scan for the RSDP. Input: tests/fuzz/acpi_image.h.
#include <stdint.h>
#include "drivers/acpi.h"
#include "drivers/acpi_mcfg.h"
#include <string.h>
#include "tests/fuzz/acpi_image.h"
#include "tests/fuzz/fuzz.h"

// Flag bits 3..5 pick the table that acpi_find_table looks for.
static const char *const lookups[8] = {
    "APIC", "FACP", "HPET", "SRAT", "SLIT", "MCFG", "SSDT", "WAET",
};

// What acpi_find_table promises about the table it returns: the signature
// asked for, a length it was mapped at, and a zero checksum.
static void check_table(const uint8_t *t, const char *sig)
{
    FUZZ_CHECK(!memcmp(t, sig, 4));
    uint32_t len = fuzz_rd32(t + 4);
    FUZZ_CHECK(len >= 36);
    FUZZ_CHECK(acpi_image_sum(t, len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct acpi_info info;
    struct acpi_image a;
    size_t rsdp_len;
    const uint8_t *rsdp, *t;

    if (!acpi_image_open(&a, data, size))
        return 0;
    rsdp = acpi_image_rsdp(&a, &rsdp_len);
    if (rsdp) {
        int rc = acpi_parse(&info, rsdp, rsdp_len, acpi_image_map, &a, acpi_image_warn(&a), NULL);
        acpi_image_check_info(&info, rc);
        const char *sig = lookups[(a.flags >> 3) & 7];
        t = acpi_find_table(rsdp, rsdp_len, sig, acpi_image_map, &a, acpi_image_warn(&a), NULL);
        if (t)
            check_table(t, sig);
        if (t && !memcmp(sig, "MCFG", 4)) {
            struct acpi_mcfg mcfg;
            uint32_t n = acpi_parse_mcfg(t, &mcfg, acpi_image_warn(&a), NULL);
            if (n > ACPI_MCFG_MAX)
                __builtin_trap();
            for (uint32_t i = 0; i < n; i++)
                if (mcfg.e[i].bus_last < mcfg.e[i].bus_first || (mcfg.e[i].base & 0xFFFFF) || !mcfg.e[i].base)
                    __builtin_trap();
        }
    }
    acpi_image_close(&a);
    return 0;
}
