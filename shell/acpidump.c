// SPDX-License-Identifier: MIT
// acpidump: prints the RSDP and every ACPI table reachable from it as
// text over the console, for tests/data/acpi/ (the host tests read this
// format directly):
//
//   ACPIDUMP <SIG> <phys, hex> <offset, hex> <up to 32 bytes, hex>
//   ...
//   ACPIDUMP END <tables>
//
// It dumps bytes as they are, valid or not: its job is to capture what
// firmware wrote, and the parser's job to judge it. Reached: the RSDT, the
// XSDT, everything they list, and the FADT's FACS and DSDT.
//
// A diagnostic of the kernel's own view of the firmware (it reads
// drivers/acpi.h), so it is kernel code beside the shell, not an app:
// app=acpidump, or `run acpidump` at the shell's prompt.
#include "goro.h"
#include "drivers/acpi.h"
#include "lib/printf.h"
#include "lib/le.h"

#define HDR_LEN 36
#define TABLE_MAX (1u << 20)
#define MAX_SEEN 64
#define CHUNK 32

// As the kernel's map (drivers/acpi_boot.c): identity below 4 GiB, page 0
// unmapped.
static const uint8_t *phys_ptr(uint64_t phys, size_t len)
{
    if (phys < 0x1000 || phys >= (4ull << 30) || len > (4ull << 30) - phys)
        return 0;
    return (const uint8_t *)(uintptr_t)phys;
}

static void dump_bytes(const char *sig, uint64_t phys, const uint8_t *p, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    char line[2 * CHUNK + 1];
    for (size_t off = 0; off < len; off += CHUNK) {
        size_t n = len - off < CHUNK ? len - off : CHUNK;
        for (size_t i = 0; i < n; i++) {
            line[2 * i] = hex[p[off + i] >> 4];
            line[2 * i + 1] = hex[p[off + i] & 15];
        }
        line[2 * n] = 0;
        kprintf("ACPIDUMP %s %08llx %04zx %s\n", sig, (unsigned long long)phys, off, line);
    }
}

struct dumper {
    uint64_t seen[MAX_SEEN];
    int nseen;
};

// Dumps the table at phys once, by the length its header states (capped).
// Returns it, or NULL when it cannot be reached or was dumped before.
static const uint8_t *dump_table(struct dumper *d, uint64_t phys, uint32_t *len_out)
{
    const uint8_t *h = phys_ptr(phys, HDR_LEN);
    char sig[5];
    uint32_t len;

    if (!h || d->nseen == MAX_SEEN)
        return 0;
    for (int i = 0; i < d->nseen; i++)
        if (d->seen[i] == phys)
            return 0;
    d->seen[d->nseen++] = phys;
    for (int i = 0; i < 4; i++)
        sig[i] = (h[i] > 0x20 && h[i] < 0x7f) ? (char)h[i] : '_';
    sig[4] = 0;
    len = le32(h + 4);
    if (len < HDR_LEN || len > TABLE_MAX || !phys_ptr(phys, len)) {
        kprintf("acpidump: %s at 0x%llx has length %u; dumping its header only\n",
               sig, (unsigned long long)phys, len);
        len = HDR_LEN;
    }
    dump_bytes(sig, phys, h, len);
    *len_out = len;
    return h;
}

// The FADT's pointers: FIRMWARE_CTRL (FACS) and DSDT, and their 64-bit
// forms when the table is long enough to have them.
static void dump_fadt_refs(struct dumper *d, const uint8_t *f, uint32_t len)
{
    uint32_t l;
    dump_table(d, le32(f + 36), &l);
    dump_table(d, le32(f + 40), &l);
    if (len >= 148) {
        dump_table(d, le64(f + 132), &l);
        dump_table(d, le64(f + 140), &l);
    }
}

static void dump_root(struct dumper *d, uint64_t phys, uint32_t esz)
{
    uint32_t len, l;
    const uint8_t *t = dump_table(d, phys, &len);
    if (!t)
        return;
    for (uint32_t off = HDR_LEN; off + esz <= len; off += esz) {
        uint64_t e = esz == 8 ? le64(t + off) : le32(t + off);
        const uint8_t *sub = dump_table(d, e, &l);
        if (sub && l >= 116 && sub[0] == 'F' && sub[1] == 'A' && sub[2] == 'C' && sub[3] == 'P')
            dump_fadt_refs(d, sub, l);
    }
}

static int acpidump_main(int argc, char **argv)
{
    static struct dumper d;
    size_t rlen;
    uint64_t rphys;
    const uint8_t *r = acpi_rsdp(&rlen, &rphys);

    (void)argc, (void)argv;
    if (!r) {
        kprintf("acpidump: no RSDP\n");
        return 1;
    }
    dump_bytes("RSDP", rphys, r, rlen);
    dump_root(&d, le32(r + 16), 4);
    if (rlen >= 36 && r[15] >= 2)
        dump_root(&d, le64(r + 24), 8);
    kprintf("ACPIDUMP END %d\n", d.nseen);
    return 0;
}
GORO_APP(acpidump, "print every ACPI table as ACPIDUMP hex lines", acpidump_main);
