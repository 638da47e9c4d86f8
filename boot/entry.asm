; SPDX-License-Identifier: MIT
;
; Multiboot v1 and v2 headers and the 32-bit entry shared by both.
;
; QEMU's -kernel loader takes the v1 header and, for a 64-bit ELF, needs the
; a.out-kludge address fields (flag bit 16). GRUB's multiboot2 command takes
; the v2 header and loads the ELF segments itself. Both enter _start in
; 32-bit protected mode with paging off, the magic in eax and the boot
; information's physical address in ebx.
;
; _start checks for long mode, loads the image's page tables (the first
; 4 GiB identity-mapped with 2 MiB pages, the top GiB, where the APIC and
; other MMIO live, uncached), enters 64-bit mode and calls
; boot_multiboot(magic, info). The C code builds the real direct map
; later; these tables only have to get it there.

MB1_MAGIC       equ 0x1BADB002
MB1_FLAGS       equ (1 << 0) | (1 << 1) | (1 << 16)   ; align modules, memory map, address fields
MB2_MAGIC       equ 0xE85250D6

extern _image_start, _load_end, _bss_start, _bss_end
extern boot_multiboot, boot_uefi

section .multiboot
align 4
mb1_header:
    dd MB1_MAGIC
    dd MB1_FLAGS
    dd -(MB1_MAGIC + MB1_FLAGS)
    dd mb1_header           ; header_addr
    dd _image_start         ; load_addr
    dd _load_end            ; load_end_addr
    dd _bss_end             ; bss_end_addr
    dd _start               ; entry_addr

align 8
mb2_header:
    dd MB2_MAGIC
    dd 0                    ; i386 protected mode
    dd mb2_header_end - mb2_header
    dd -(MB2_MAGIC + 0 + (mb2_header_end - mb2_header))
    ; information request: memory map (6), ACPI new (15) and old (14), framebuffer (8)
    align 8
    dw 1, 0
    dd 8 + 4 * 4
    dd 6, 15, 14, 8
    ; framebuffer: prefer text-compatible 1024x768x32 when GRUB can set it;
    ; optional, so a machine without one still boots
    align 8
    dw 5, 1
    dd 20
    dd 1024, 768, 32
    align 8
    dw 0, 0                 ; end tag
    dd 8
mb2_header_end:

; The goro header: how boot/efi/loader.c finds boot_efi64 (it scans the
; first 32 KiB of the first PT_LOAD, 8-byte aligned, for the magic).
GORO_HDR_MAGIC  equ 0x314948464f524f47   ; "GOROFHI1"
align 8
goro_header:
    dq GORO_HDR_MAGIC
    dq 1                    ; version
    dq boot_efi64           ; 64-bit UEFI entry

section .data
global boot_magic, boot_info_phys, boot_entry_tsc
align 8
boot_entry_tsc: dq 0
boot_info_phys: dq 0
boot_magic:     dd 0

; The boot page tables, written by the assembler rather than by _start:
; PML4[0] -> PDPT; PDPT[0..3] -> four page directories of 2 MiB pages that
; identity-map the first 4 GiB, the top GiB (the 3-4 GiB hole, where the
; APIC and other MMIO live) uncached (PWT|PCD). Both entries load them as
; they are. Built at run time they were a 2048-pass loop and 3 translated
; blocks more before the APs' start under TCG, about 0.1 ms (docs/boot.md);
; in the image they are 24 KiB more for the loader to copy.
section .data.pagetables progbits alloc write align=4096
global boot_pml4
boot_pml4:
    dq boot_pdpt + 0x3                  ; present, writable
    times 511 dq 0
boot_pdpt:
%assign i 0
%rep 4
    dq boot_pd + i * 4096 + 0x3
%assign i i + 1
%endrep
    times 508 dq 0
boot_pd:
%assign i 0
%rep 4 * 512
%if i < 3 * 512
    dq (i << 21) | 0x83                 ; present, writable, 2 MiB
%else
    dq (i << 21) | 0x83 | 0x18          ; and PWT|PCD: the 3-4 GiB hole is MMIO
%endif
%assign i i + 1
%endrep

section .bss
align 16
global boot_stack_top
boot_stack: resb 65536            ; the boot core's g0 stack too
boot_stack_top:

section .text.boot
bits 32
global _start
_start:
    cli
    cld
    mov esi, eax
    rdtsc
    mov [boot_entry_tsc], eax
    mov [boot_entry_tsc + 4], edx
    mov [boot_magic], esi
    mov [boot_info_phys], ebx

    ; Under a hypervisor, tell the host the kernel is entered: QEMU's debug
    ; console, port 0x402 (why that port: arch/boot_marks.c).
    mov eax, 1
    cpuid
    test ecx, 1 << 31
    jz .no_marker
    mov esi, entry_marker
    mov ecx, entry_marker_len
    mov dx, 0x402
    rep outsb
.no_marker:

    ; long mode present?
    mov eax, 0x80000000
    cpuid
    cmp eax, 0x80000001
    jb .no_long_mode
    mov eax, 0x80000001
    cpuid
    test edx, 1 << 29
    jz .no_long_mode
    mov ebp, edx                    ; keep feature bits: NX is bit 20

    ; .bss is not cleared here: every loader that starts goro has zeroed it
    ; (the multiboot 1 and 2 specifications require it of the loader; GRUB,
    ; QEMU's -kernel and boot/efi/loader.c do it). Clearing it again took
    ; 0.35 M instructions, a fifth of the boot before the APs under TCG.

    mov esp, boot_stack_top

    mov eax, cr4
    or eax, 1 << 5                  ; PAE
    mov cr4, eax
    mov eax, boot_pml4
    mov cr3, eax
    mov ecx, 0xC0000080             ; EFER
    rdmsr
    or eax, 1 << 8                  ; LME
    test ebp, 1 << 20
    jz .no_nx
    or eax, 1 << 11                 ; NXE, so later page tables may use NX
.no_nx:
    wrmsr
    mov eax, cr0
    or eax, (1 << 31) | (1 << 16) | 1   ; PG, WP, PE
    mov cr0, eax
    lgdt [gdt64_ptr]
    jmp 0x08:long_entry

; No long mode: say so on the serial port and the VGA text screen, then stop.
.no_long_mode:
    mov esi, no_lm_msg
    mov edi, 0xB8000
.msg:
    lodsb
    test al, al
    jz .halt
    mov ah, 0x4F
    mov [edi], ax
    add edi, 2
    mov bl, al
    mov dx, 0x3FD
.wait_tx:
    in al, dx
    test al, 0x20
    jz .wait_tx
    mov dx, 0x3F8
    mov al, bl
    out dx, al
    jmp .msg
.halt:
    hlt
    jmp .halt

; Kernel data selector in ds, es, ss; fs and gs null (GS base is set
; later through its MSR). Shared by both 64-bit entries.
%macro load_data_segments 0
    mov ax, 0x10
    mov ds, ax
    mov es, ax
    mov ss, ax
    xor eax, eax
    mov fs, ax
    mov gs, ax
%endmacro

bits 64
long_entry:
    load_data_segments
    mov rsp, boot_stack_top
    xor ebp, ebp
    mov edi, [boot_magic]
    mov esi, [boot_info_phys]
    call boot_multiboot
.hang:
    cli
    hlt
    jmp .hang

; Not in .text.boot: the multiboot path's code before the APs' STARTUP
; (this file's, then boot/text_order.txt's, the APs' check-in among them)
; fits the image's first page only without it; under TCG a page's first
; block costs a walk of every vCPU's TLB (docs/boot.md).
section .text.boot_efi

; The GNU-EFI loader's entry (boot/efi/loader.c): 64-bit mode on the
; firmware's identity-mapped page tables and the loader's stack, interrupts
; off, rdi = the loader's struct boot_info, which lies outside the image.
; From here on the state matches long_entry's: goro's GDT, .bss clear, the
; same 4 GiB identity map, the boot stack. boot_uefi copies the boot_info.
global boot_efi64
boot_efi64:
    cli
    cld
    mov r12, rdi
    mov eax, 1                      ; the entry marker, as in _start
    cpuid
    test ecx, 1 << 31
    jz .no_marker
    lea rsi, [rel entry_marker]
    mov ecx, entry_marker_len
    mov dx, 0x402
    rep outsb
.no_marker:
    lgdt [gdt64_ptr64]
    push 0x08
    lea rax, [rel .reload_cs]
    push rax
    retfq
.reload_cs:
    load_data_segments

    ; .bss: zeroed by boot/efi/loader.c, which loads every segment's
    ; memsz (see _start)

    ; The boot page tables are the image's (boot_pml4, above).

    ; NXE as on the 32-bit path, so later tables may use NX
    mov eax, 0x80000001
    cpuid
    test edx, 1 << 20
    jz .no_nx
    mov ecx, 0xC0000080
    rdmsr
    or eax, 1 << 11
    wrmsr
.no_nx:
    ; PGE off, as on the 32-bit path; clearing it also flushes any global
    ; firmware translations that the CR3 load below would keep
    mov rax, cr4
    and rax, ~(1 << 7)
    mov cr4, rax
    mov rax, boot_pml4
    mov cr3, rax
    mov rax, cr0
    or eax, 1 << 16                 ; WP
    mov cr0, rax

    mov rsp, boot_stack_top
    xor ebp, ebp
    mov rdi, r12
    call boot_uefi
.hang:
    cli
    hlt
    jmp .hang

section .rodata
entry_marker: db "goro:entry", 10
entry_marker_len equ $ - entry_marker
no_lm_msg: db "goro: this CPU has no long mode (x86-64); goro cannot boot here", 13, 10, 0

align 16
gdt64:
    dq 0
    dq 0x00AF9A000000FFFF           ; 0x08: 64-bit code
    dq 0x00CF92000000FFFF           ; 0x10: data
gdt64_end:
gdt64_ptr:
    dw gdt64_end - gdt64 - 1
    dd gdt64
gdt64_ptr64:                        ; lgdt in 64-bit mode reads an 8-byte base
    dw gdt64_end - gdt64 - 1
    dq gdt64
