// SPDX-License-Identifier: MIT
// goro's UEFI loader (GNU-EFI): loads \goro.elf from the volume it was
// itself loaded from, gathers what the kernel needs into a struct boot_info
// (boot/bootinfo.h, the same structure the multiboot paths fill), exits
// boot services and jumps to the kernel's 64-bit UEFI entry, boot_efi64.
// What it reads from outside (the ELF image, the load options and
// \goro.cmdline, the firmware's memory map) is parsed by loader_parse.c,
// which has no firmware calls, so host tests and fuzz harnesses run it.
//
// What the loader and the kernel agree on (boot/efi/README):
// - the kernel is \goro.elf at the root of the loader's volume, an
//   unstripped ELF64 x86-64 image whose PT_LOAD segments are loaded at
//   their physical addresses;
// - boot_efi64's address is in the "goro header" (GORO_HDR_MAGIC, version,
//   entry) that boot/entry.asm places after the multiboot2 header, within
//   the first 32 KiB of the first PT_LOAD segment;
// - the entry is called with rdi = &boot_info (SysV), interrupts off, on
//   the firmware's identity-mapped page tables and the loader's stack;
// - boot_info lives in pages of EfiLoaderData that the handed-over memory
//   map calls reserved, so nothing the kernel frees can overlap it before
//   boot_uefi copies it. The kernel image's own pages are also
//   EfiLoaderData and are handed over as usable: page_init reserves the
//   image by its link-time bounds.
//
// The command line is the image's load options (an EFI shell's
// "BOOTX64.EFI app=ktest", with the image name skipped), else the first
// line of \goro.cmdline, else empty. QEMU's fw_cfg opt/goro/cmdline is
// appended by the kernel as on the other paths.
//
// Built without GNU_EFI_USE_MS_ABI: Debian's prebuilt crt0 hands efi_main
// its arguments in SysV registers, and every firmware call goes through
// uefi_call_wrapper.
#include <efi.h>
#include <efilib.h>
#include <stddef.h>
#include <stdint.h>
#include "boot/bootinfo.h"
#include "boot/efi/loader_parse.h"

#define KERNEL_PATH L"\\goro.elf"
#define CMDLINE_PATH L"\\goro.cmdline"
#define ERROR_PAUSE_US (3 * 1000 * 1000)

typedef void (*kernel_entry_fn)(struct boot_info *bi) __attribute__((noreturn));

static EFI_HANDLE self;
static uint64_t loader_tsc;

static uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

// Every error before the kernel runs ends here: the message stays on the
// screen (and OVMF's serial mirror) for a moment, then the firmware gets
// the status back and moves on to its next boot option.
static EFI_STATUS fail(EFI_STATUS st, const char *what)
{
    Print(L"goro loader: %a (%r)\n", what, st);
    uefi_call_wrapper(BS->Stall, 1, ERROR_PAUSE_US);
    return st;
}

// ---- files -----------------------------------------------------------------

static EFI_STATUS open_root(EFI_FILE_HANDLE *root)
{
    EFI_LOADED_IMAGE *li;
    EFI_FILE_IO_INTERFACE *fs;
    EFI_STATUS st = uefi_call_wrapper(BS->HandleProtocol, 3, self, &LoadedImageProtocol, (void **)&li);
    if (EFI_ERROR(st))
        return st;
    st = uefi_call_wrapper(BS->HandleProtocol, 3, li->DeviceHandle, &FileSystemProtocol, (void **)&fs);
    if (EFI_ERROR(st))
        return st;
    return uefi_call_wrapper(fs->OpenVolume, 2, fs, root);
}

// Reads a whole file into pool memory; *buf is the caller's to free.
static EFI_STATUS read_file(EFI_FILE_HANDLE root, CHAR16 *path, void **buf, UINTN *size)
{
    EFI_FILE_HANDLE f;
    EFI_STATUS st = uefi_call_wrapper(root->Open, 5, root, &f, path, EFI_FILE_MODE_READ, 0);
    if (EFI_ERROR(st))
        return st;
    EFI_FILE_INFO *info = LibFileInfo(f);
    if (!info) {
        uefi_call_wrapper(f->Close, 1, f);
        return EFI_DEVICE_ERROR;
    }
    *size = info->FileSize;
    FreePool(info);
    *buf = AllocatePool(*size + 1);
    if (!*buf) {
        uefi_call_wrapper(f->Close, 1, f);
        return EFI_OUT_OF_RESOURCES;
    }
    UINTN got = *size;
    st = uefi_call_wrapper(f->Read, 3, f, &got, *buf);
    uefi_call_wrapper(f->Close, 1, f);
    if (!EFI_ERROR(st) && got != *size)
        st = EFI_END_OF_FILE;
    if (EFI_ERROR(st))
        FreePool(*buf);
    return st;
}

// ---- the kernel image ------------------------------------------------------

// Places every PT_LOAD at its physical address, which must be free RAM:
// goro runs identity-mapped where it was linked. img passed elf_image_check.
static EFI_STATUS elf_load(const void *img)
{
    struct elf_seg seg;
    for (size_t i = 0; i < elf_image_phnum(img); i++) {
        if (!elf_image_segment(img, i, &seg))
            continue;
        EFI_PHYSICAL_ADDRESS base = seg.paddr & ~0xFFFull;
        UINTN pages = (seg.paddr + seg.memsz - base + 0xFFF) >> 12;
        EFI_STATUS st = uefi_call_wrapper(BS->AllocatePages, 4, AllocateAddress,
                                          EfiLoaderData, pages, &base);
        if (EFI_ERROR(st)) {
            Print(L"goro loader: memory 0x%lx-0x%lx for the kernel is taken by the firmware\n",
                  seg.paddr & ~0xFFFull, (seg.paddr & ~0xFFFull) + pages * 4096);
            return st;
        }
        // The firmware's CopyMem and SetMem, not gnu-efi's: gnu-efi 4
        // (Debian 13) builds its own with the Microsoft calling convention,
        // which this loader, built without GNU_EFI_USE_MS_ABI, cannot call
        // directly. (VOID *): the source is only read.
        uefi_call_wrapper(BS->CopyMem, 3, (VOID *)seg.paddr,
                          (VOID *)((const uint8_t *)img + seg.offset), (UINTN)seg.filesz);
        uefi_call_wrapper(BS->SetMem, 3, (VOID *)(seg.paddr + seg.filesz),
                          (UINTN)(seg.memsz - seg.filesz), (UINT8)0);
    }
    return EFI_SUCCESS;
}

// ---- boot_info -------------------------------------------------------------

static void cmdline_from_volume(struct boot_info *bi, EFI_FILE_HANDLE root)
{
    void *buf;
    UINTN size;
    if (EFI_ERROR(read_file(root, CMDLINE_PATH, &buf, &size)))
        return;
    cmdline_from_file(bi->cmdline, sizeof bi->cmdline, buf, size);
    FreePool(buf);
}

static int guid_eq(const EFI_GUID *a, const EFI_GUID *b)
{
    return CompareMem(a, b, sizeof *a) == 0;
}

static EFI_STATUS find_rsdp(struct boot_info *bi)
{
    EFI_GUID acpi20 = ACPI_20_TABLE_GUID, acpi10 = ACPI_TABLE_GUID;
    const uint8_t *found = 0;
    for (UINTN i = 0; i < ST->NumberOfTableEntries; i++) {
        EFI_CONFIGURATION_TABLE *t = &ST->ConfigurationTable[i];
        if (guid_eq(&t->VendorGuid, &acpi20)) {
            found = t->VendorTable;
            break;
        }
        if (guid_eq(&t->VendorGuid, &acpi10))
            found = t->VendorTable;
    }
    if (!found)
        return EFI_NOT_FOUND;
    // Revision 2+ carries its own length (36 bytes); ACPI 1.0's is 20.
    UINTN n = found[15] >= 2 ? 36 : 20;
    uefi_call_wrapper(BS->CopyMem, 3, (VOID *)bi->rsdp, (VOID *)found, n);  // as in elf_load
    bi->rsdp_len = (uint32_t)n;
    bi->rsdp_phys = (uint64_t)(UINTN)found;
    return EFI_SUCCESS;
}

static uint8_t mask_pos(uint32_t mask)
{
    uint8_t pos = 0;
    while (mask && !(mask & 1)) {
        mask >>= 1;
        pos++;
    }
    return pos;
}

// The GOP's current mode, as it is: setting a mode here would change
// what the user sees for no gain. No GOP, or a blit-only one: no fb.
static void find_framebuffer(struct boot_info *bi)
{
    EFI_GRAPHICS_OUTPUT_PROTOCOL *gop;
    if (EFI_ERROR(uefi_call_wrapper(BS->LocateProtocol, 3, &GraphicsOutputProtocol, 0, (void **)&gop)))
        return;
    if (!gop || !gop->Mode || !gop->Mode->Info)
        return;
    EFI_GRAPHICS_OUTPUT_MODE_INFORMATION *info = gop->Mode->Info;
    struct boot_framebuffer *fb = &bi->fb;
    switch (info->PixelFormat) {
    case PixelRedGreenBlueReserved8BitPerColor:
        fb->red_pos = 0, fb->green_pos = 8, fb->blue_pos = 16;
        break;
    case PixelBlueGreenRedReserved8BitPerColor:
        fb->red_pos = 16, fb->green_pos = 8, fb->blue_pos = 0;
        break;
    case PixelBitMask:
        fb->red_pos = mask_pos(info->PixelInformation.RedMask);
        fb->green_pos = mask_pos(info->PixelInformation.GreenMask);
        fb->blue_pos = mask_pos(info->PixelInformation.BlueMask);
        break;
    default:
        return;
    }
    fb->addr = gop->Mode->FrameBufferBase;
    fb->width = info->HorizontalResolution;
    fb->height = info->VerticalResolution;
    fb->pitch = info->PixelsPerScanLine * 4;
    fb->bpp = 32;
}

// ---- the memory map ----------------------------------------------------------

// GetMemoryMap then ExitBootServices, again while the key is stale: the
// firmware may change the map between the two (timer events run until
// boot services end). The buffer has room for growth, since the first
// failed exit may itself have allocated.
static EFI_STATUS exit_boot_services(uint8_t **map, UINTN *map_size, UINTN *desc_size)
{
    UINTN cap = 0, key;
    UINT32 desc_ver;
    *map = 0;
    for (int tries = 0; tries < 8; tries++) {
        UINTN size = cap;
        EFI_STATUS st = uefi_call_wrapper(BS->GetMemoryMap, 5, &size,
                                          (EFI_MEMORY_DESCRIPTOR *)*map, &key, desc_size, &desc_ver);
        if (st == EFI_BUFFER_TOO_SMALL) {
            if (*map)
                FreePool(*map);
            cap = size + 16 * sizeof(EFI_MEMORY_DESCRIPTOR) + 4096;
            *map = AllocatePool(cap);
            if (!*map)
                return EFI_OUT_OF_RESOURCES;
            continue;
        }
        if (EFI_ERROR(st))
            return st;
        // efi_mmap_convert reads the fields of UEFI 2.x's descriptor.
        if (*desc_size < EFI_MMAP_DESC_MIN)
            return EFI_INCOMPATIBLE_VERSION;
        *map_size = size;
        st = uefi_call_wrapper(BS->ExitBootServices, 2, self, key);
        if (!EFI_ERROR(st))
            return EFI_SUCCESS;
        if (st != EFI_INVALID_PARAMETER)
            return st;
    }
    return EFI_ABORTED;
}

// ---- main ----------------------------------------------------------------------

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab)
{
    loader_tsc = rdtsc();
    self = image;
    InitializeLib(image, systab);
    Print(L"goro loader: loading \\goro.elf\n");

    EFI_FILE_HANDLE root;
    EFI_STATUS st = open_root(&root);
    if (EFI_ERROR(st))
        return fail(st, "cannot open the loader's own volume");
    void *img;
    UINTN size;
    st = read_file(root, KERNEL_PATH, &img, &size);
    if (EFI_ERROR(st))
        return fail(st, "cannot read \\goro.elf from the loader's volume");
    uint64_t entry;
    const char *bad = elf_image_check(img, size, &entry);
    if (bad)
        return fail(EFI_LOAD_ERROR, bad);

    EFI_PHYSICAL_ADDRESS bi_addr = 0xFFFFFFFF;
    UINTN bi_pages = (sizeof(struct boot_info) + 4095) / 4096;
    st = uefi_call_wrapper(BS->AllocatePages, 4, AllocateMaxAddress, EfiLoaderData, bi_pages, &bi_addr);
    if (EFI_ERROR(st))
        return fail(st, "cannot allocate pages for the boot information");
    struct boot_info *bi = (struct boot_info *)(UINTN)bi_addr;
    uefi_call_wrapper(BS->SetMem, 3, (VOID *)bi, (UINTN)(bi_pages * 4096), (UINT8)0);   // as in elf_load
    bi->entry_tsc = loader_tsc;

    EFI_LOADED_IMAGE *li;
    if (!EFI_ERROR(uefi_call_wrapper(BS->HandleProtocol, 3, image, &LoadedImageProtocol, (void **)&li)) &&
        li->LoadOptions && li->LoadOptionsSize)
        cmdline_from_options(bi->cmdline, sizeof bi->cmdline, li->LoadOptions, li->LoadOptionsSize);
    if (!bi->cmdline[0])
        cmdline_from_volume(bi, root);
    uefi_call_wrapper(root->Close, 1, root);

    st = find_rsdp(bi);
    if (EFI_ERROR(st))
        return fail(st, "the firmware gives no ACPI table (RSDP); goro needs one");
    find_framebuffer(bi);

    st = elf_load(img);
    if (EFI_ERROR(st))
        return fail(st, "cannot place the kernel at its link address");
    FreePool(img);
    Print(L"goro loader: entering the kernel at 0x%lx, command line \"%a\"\n", entry, bi->cmdline);

    uint8_t *map;
    UINTN map_size = 0, desc_size = 0;
    st = exit_boot_services(&map, &map_size, &desc_size);
    if (st == EFI_INCOMPATIBLE_VERSION)
        return fail(st, "the firmware's memory descriptors are shorter than UEFI 2.x's 40 bytes");
    if (EFI_ERROR(st))
        return fail(st, "ExitBootServices failed");
    __asm__ volatile("cli");
    efi_mmap_convert(bi, map, map_size, desc_size, bi_addr, bi_pages * 4096);
    ((kernel_entry_fn)(UINTN)entry)(bi);
}
