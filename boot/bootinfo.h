// SPDX-License-Identifier: MIT
// The one structure every boot path fills before kmain: multiboot v1
// (QEMU -kernel), multiboot2 (GRUB, BIOS or UEFI) and the GNU-EFI loader.
// It is a copy: nothing in it points into memory the loader owned, so the
// low pages can be reused (the AP trampoline) once it is filled; a parse
// that comes after the APs' start reads the bytes they overwrote from a
// copy (boot_keep).
#ifndef GORO_BOOTINFO_H
#define GORO_BOOTINFO_H

#include <stdbool.h>
#include <stdint.h>

#define BOOT_MMAP_MAX 128
#define BOOT_CMDLINE_MAX 1024
#define BOOT_NOTES_MAX 1024

enum boot_mem_type {
    BOOT_MEM_USABLE = 1,
    BOOT_MEM_RESERVED = 2,
    BOOT_MEM_ACPI_RECLAIM = 3,
    BOOT_MEM_ACPI_NVS = 4,
    BOOT_MEM_BAD = 5,
};

// len > 0 and base + len <= UINT64_MAX: every boot path drops (with a
// note) an entry that is empty or runs past the end of the address space.
struct boot_mmap_entry {
    uint64_t base;
    uint64_t len;
    uint32_t type;          // enum boot_mem_type
};

struct boot_framebuffer {
    uint64_t addr;          // physical; 0 when there is none
    uint32_t pitch;         // bytes per line
    uint32_t width, height;
    uint8_t bpp;
    uint8_t red_pos, green_pos, blue_pos;
};

struct boot_info {
    const char *loader;                 // "multiboot1", "multiboot2", "uefi"
    uint64_t entry_tsc;                 // TSC at the first instruction
    char cmdline[BOOT_CMDLINE_MAX];
    uint32_t mmap_count;
    struct boot_mmap_entry mmap[BOOT_MMAP_MAX];
    uint8_t rsdp[36];                   // a copy of the RSDP, when the loader gave one
    uint32_t rsdp_len;                  // 0: none given, scan the BIOS areas
    uint64_t rsdp_phys;                 // where the loader found it, if it says
    struct boot_framebuffer fb;
    // What the boot path found wrong in the loader's information and how it
    // went on, one '\n'-ended line per problem; kmain prints it. Empty on a
    // good boot.
    char notes[BOOT_NOTES_MAX];
};

extern struct boot_info boot_info;

// RAM the kernel may use: what the page allocator frees and the NUMA
// ranges count.
static inline bool boot_mmap_usable(const struct boot_mmap_entry *e)
{
    return e->type == BOOT_MEM_USABLE && e->len > 0;
}

// The part of entry e that is usable RAM inside [base, end), as [*lo,
// *hi); false when there is none.
static inline bool boot_mmap_clip(const struct boot_mmap_entry *e, uint64_t base, uint64_t end,
                                  uint64_t *lo, uint64_t *hi)
{
    if (!boot_mmap_usable(e))
        return false;
    *lo = e->base > base ? e->base : base;
    *hi = e->base + e->len < end ? e->base + e->len : end;
    return *lo < *hi;
}

// The end of the highest usable range (0 when there is none).
static inline uint64_t boot_usable_end(const struct boot_info *bi)
{
    uint64_t end = 0;
    for (uint32_t i = 0; i < bi->mmap_count; i++) {
        const struct boot_mmap_entry *e = &bi->mmap[i];
        if (boot_mmap_usable(e) && e->base + e->len > end)
            end = e->base + e->len;
    }
    return end;
}

// The kernel's side of a parse that waits for the APs' start (boot/boot.c).
// Under multiboot 1 the entry does not parse: kmain reads the command
// line's words it needs first from a copy of the loader's own text
// (boot_early_cmdline), has boot_keep copy what lies where that page goes, starts the APs, then
// calls boot_parse, which fills *bi as the entry would have (reading the
// kept bytes where the loader's information lay under the page). Under
// multiboot 2 and UEFI the entry parsed already: boot_keep and boot_parse
// do nothing, boot_early_cmdline is bi->cmdline.
const char *boot_early_cmdline(const struct boot_info *bi);
// Memory for the boot to keep before the page allocator exists: the top
// len bytes (a multiple of 4096) of the highest usable range below 4 GiB
// (the boot page tables map no more) that holds them above floor and
// above the loader's information; 0 when none does. The caller keeps it
// from the page allocator (page_init). Before boot_parse it reads the
// multiboot 1 map where the loader left it.
uint64_t boot_take_top(const struct boot_info *bi, uint64_t floor, uint64_t len);
void boot_keep(uint64_t phys, uint64_t len);
void boot_parse(struct boot_info *bi);

// Entered once per boot, on the BSP, with interrupts off.
void kmain(struct boot_info *bi) __attribute__((noreturn));

// Appends one line (given without its '\n') to bi->notes. When a line
// does not fit, "..." ends the notes and later lines are dropped: room for
// it is kept free. Freestanding, so that the UEFI loader can note too.
static inline void boot_note_line(struct boot_info *bi, const char *line)
{
    uint32_t n = 0, len = 0;
    while (n < BOOT_NOTES_MAX - 1 && bi->notes[n])
        n++;
    if (n + 5 > BOOT_NOTES_MAX)
        return;                         // no room even for "...\n" (a loader filled it)
    if (n >= 4 && bi->notes[n - 4] == '.' && bi->notes[n - 3] == '.' &&
        bi->notes[n - 2] == '.' && bi->notes[n - 1] == '\n')
        return;                         // already full
    while (len < BOOT_NOTES_MAX && line[len])
        len++;
    if (n + len + 1 + 5 > BOOT_NOTES_MAX) {     // keep room for "...\n" and the NUL
        line = "...";
        len = 3;
    }
    for (uint32_t i = 0; i < len; i++)
        bi->notes[n++] = line[i];
    bi->notes[n++] = '\n';
    bi->notes[n] = 0;
}

#endif
