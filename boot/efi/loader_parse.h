// SPDX-License-Identifier: MIT
// What the GNU-EFI loader reads from outside, parsed without firmware
// calls or gnu-efi types (boot/efi/loader_parse.c): the kernel's ELF image,
// the load options and \goro.cmdline, and the firmware's memory map. The
// loader (loader.c) does the I/O; host tests and the fuzz harnesses
// (tests/host/test_efi_loader.c, tests/fuzz/) run these functions as they are.
#ifndef GORO_EFI_LOADER_PARSE_H
#define GORO_EFI_LOADER_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "boot/bootinfo.h"

// ---- the kernel image ------------------------------------------------------

#define GORO_HDR_MAGIC 0x314948464f524f47ull   // "GOROFHI1", little-endian
#define GORO_HDR_VERSION 1
#define GORO_HDR_SCAN (32 * 1024)

// A PT_LOAD segment: memsz bytes at paddr, the first filesz of them from the
// file at offset.
struct elf_seg {
    uint64_t paddr, memsz, offset, filesz;
};

// Checks the size bytes of img as goro's kernel (boot/efi/README): an ELF64
// x86-64 image whose program headers and PT_LOAD segments lie inside the
// file and whose segments end below 2^64, with a goro header in the first
// 32 KiB of its first PT_LOAD whose entry lies inside a PT_LOAD segment.
// Returns NULL and sets *entry, or a sentence saying what is wrong.
const char *elf_image_check(const void *img, size_t size, uint64_t *entry);

// After elf_image_check accepted img: the number of program headers, and
// the i-th one when it is a PT_LOAD with memsz > 0 (else false).
size_t elf_image_phnum(const void *img);
bool elf_image_segment(const void *img, size_t i, struct elf_seg *seg);

// ---- the command line ------------------------------------------------------

// The load options (bytes of UCS-2 text, no alignment owed) -> ASCII in
// out[0..cap), NUL-terminated, with the image's own name skipped. Returns
// its length; 0 when there is none or the options are not printable text
// (a firmware boot entry's binary data).
size_t cmdline_from_options(char *out, size_t cap, const void *opts, size_t bytes);

// The first line of \goro.cmdline (size bytes; a NUL ends it too), tabs
// as spaces -> out[0..cap), NUL-terminated. Returns its length.
size_t cmdline_from_file(char *out, size_t cap, const char *buf, size_t size);

// ---- the memory map ----------------------------------------------------------

#define EFI_MMAP_DESC_MIN 40            // UEFI 2.x's EFI_MEMORY_DESCRIPTOR

// The firmware's map (map_size bytes of desc_size-byte descriptors) ->
// bi's, ranges that touch and agree merged, with [keep, keep + keep_len)
// (the boot_info pages themselves) carved out as reserved. Bad descriptors
// (too short, past 2^64) and a full map are noted in bi->notes. Runs after
// ExitBootServices: no firmware calls.
void efi_mmap_convert(struct boot_info *bi, const uint8_t *map, size_t map_size,
                      size_t desc_size, uint64_t keep, uint64_t keep_len);

#endif
