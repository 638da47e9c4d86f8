// SPDX-License-Identifier: MIT
// Little-endian fields of what firmware and loaders hand over (ACPI tables,
// multiboot information, ELF files, UEFI memory maps), which owe no
// alignment: read byte by byte, so neither the field's alignment nor the
// reader's byte order matters. Pure: the boot loader, the kernel and the
// host tests all compile it.
#ifndef GORO_LE_H
#define GORO_LE_H
#include <stdint.h>

static inline uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

#endif
