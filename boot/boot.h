// SPDX-License-Identifier: MIT
// The boot paths' parsers: what a loader hands over -> struct boot_info
// (boot/bootinfo.h). Pure: the loader's memory is reached only through the
// map callback and problems become lines of bi->notes, so host unit tests
// and the fuzz harnesses (tests/host/test_boot.c, tests/fuzz/) run the same
// code as the kernel. boot/boot.c is the kernel's side: the entries from
// boot/entry.asm, with physical memory identity-mapped.
//
// What holds after a parse, whatever the input: every mmap entry keeps
// bootinfo.h's rule (len > 0, no wrap past 2^64); mmap_count <=
// BOOT_MMAP_MAX; cmdline and notes are NUL-terminated; rsdp_len <= 36.
#ifndef GORO_BOOT_H
#define GORO_BOOT_H

#include <stddef.h>
#include <stdint.h>
#include "boot/bootinfo.h"

// Returns a pointer to len bytes at physical address phys, or NULL when
// that range cannot be read. (The same contract as drivers/acpi.h's.)
typedef const void *(*boot_map_fn)(void *ctx, uint64_t phys, size_t len);

// Multiboot v1 (boot/multiboot.c): the information structure at info_phys,
// with the command line and memory map it points to.
void mb1_parse(struct boot_info *bi, uint64_t info_phys, boot_map_fn map, void *ctx);

// Multiboot2: the tag list at info_phys (its first word is its size).
void mb2_parse(struct boot_info *bi, uint64_t info_phys, boot_map_fn map, void *ctx);

// The GNU-EFI loader's boot_info (boot/uefi.c), taken over into *bi. The
// loader is goro's own, but its structure is checked like any input.
void uefi_take(struct boot_info *bi, const struct boot_info *from);

// Loader bytes the kernel overwrote before the parse read them (the APs'
// start-up page: kmain starts the APs before a multiboot 1 parse), kept
// so that the parse reads what the loader left. boot_kept_map takes the
// live mapping of phys..+len and returns it as it was: `live` itself when
// the range misses the kept bytes, else a copy in k->scratch with them put
// back (NULL, "cannot be read", once the scratch is spent). Pure, so the
// host tests parse through it.
#define BOOT_KEPT_MAX 512
#define BOOT_KEPT_SCRATCH 16384
struct boot_kept {
    uint64_t phys;
    uint32_t len;                       // <= BOOT_KEPT_MAX; 0: nothing kept
    uint32_t used;                      // bytes of scratch handed out
    uint8_t bytes[BOOT_KEPT_MAX];
    uint8_t scratch[BOOT_KEPT_SCRATCH];
};
const void *boot_kept_map(struct boot_kept *k, const void *live, uint64_t phys, size_t len);

// For the parsers (boot/bootinfo.c): one formatted line of bi->notes, and
// the memory map's entries added under bootinfo.h's rule. An empty entry
// is dropped quietly; one that wraps past 2^64 or finds the map full is
// counted in *drops, and boot_mmap_notes then says once per kind what the
// walk (by who) left out, so a bad map costs a line, not a line per entry.
struct boot_mmap_drops {
    uint32_t full;                      // entries past BOOT_MMAP_MAX
    uint32_t wrapped;                   // entries past the end of the address space
    uint64_t wrap_base, wrap_len;       // the first of those
};
void boot_note(struct boot_info *bi, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void boot_mmap_add(struct boot_info *bi, struct boot_mmap_drops *drops, uint64_t base,
                   uint64_t len, uint32_t type);
void boot_mmap_notes(struct boot_info *bi, const char *who, const struct boot_mmap_drops *drops);

#endif
