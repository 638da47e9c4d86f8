; SPDX-License-Identifier: MIT
;
; AP start-up code, assembled as a flat binary and copied to AP_TRAMPOLINE
; (a page below 1 MiB, the SIPI vector's page) by arch/smp.c, which fills the
; parameter block first. Every AP started by the same SIPI runs this at once:
; the only shared write is the ticket, taken with lock xadd, which picks the
; AP's stack (and, when every AP was started at once, its slot). Then
; ap_entry(ticket) on that stack, with the BSP's page tables.
;
; The APs write nothing on this page: the ticket counter is the kernel's
; (p_ticket holds its address), and the GDT's descriptors come with their
; accessed bits set, so that loading SS does not set one. Under TCG a write
; to a page that holds translated code takes QEMU's self-modifying-code
; path, which takes the page's spinlock, the one an AP holds while it
; translates a block of this page. warm is a block the boot core runs
; before the STARTUP (arch/smp.c, trampoline_warm).
;
; Real mode goes straight to long mode: CR4.PAE, CR3 and EFER.LME are set
; while still in real mode (all three are legal there), then one MOV CR0
; sets PE and PG together, which the SDM allows (vol. 3A, 9.9.1: "in the
; same instruction, the PG flag ... can be set"); with LME set that
; activates IA-32e mode, and the far jump lands in the 64-bit segment. Under
; TCG every change of CR0.PE/PG/WP or of CR4's paging bits flushes the
; vCPU's TLB and its 64 KiB jump cache, and each AP pays that serially on
; one host CPU (docs/boot.md, "QEMU's side of an AP, measured"); the
; protected-mode stop in between cost one flush and six blocks more.
;
; The parameter block's layout is struct ap_params in arch/smp.c.

bits 16
org 0x8000

start:
    jmp short real_start
warm:                   ; +2   a near return, called by the boot core in long mode
    ret
align 8
params:
p_cr3:      dq 0        ; +8   BSP's CR3 (below 4 GiB)
p_entry:    dq 0        ; +16  64-bit C entry, void ap_entry(uint64_t ticket)
p_stacks:   dq 0        ; +24  array of stack tops, indexed by ticket
p_ticket:   dq 0        ; +32  address of the next-ticket counter (uint32_t)
p_efer:     dd 0        ; +40  EFER bits to set (LME, NXE)
p_cr4:      dd 0        ; +44  CR4 to load (PAE at least)
p_tickets:  dd 0        ; +48  tickets with a stack; an AP with a later one halts here

align 16
gdt:
    dq 0
    dq 0x00AF9B000000FFFF   ; 0x08: 64-bit code, accessed
    dq 0x00CF93000000FFFF   ; 0x10: data, accessed, B set as in the kernel's GDT
gdt_end:
gdtr:
    dw gdt_end - gdt - 1
    dd gdt

; Real mode, CS base AP_TRAMPOLINE: only relative jumps until the far one;
; DS is 0, so the data references use the absolute addresses org gives.
real_start:
    cli
    cld
    xor ax, ax
    mov ds, ax
    lgdt [gdtr]
    mov eax, [p_cr4]
    mov cr4, eax
    mov eax, [p_cr3]
    mov cr3, eax
    mov ecx, 0xC0000080
    rdmsr
    or eax, [p_efer]
    wrmsr
    mov eax, cr0
    or eax, (1 << 31) | (1 << 16) | 1   ; PG, WP, PE in one write
    mov cr0, eax
    jmp dword 0x08:long_mode

; Only SS is loaded: DS, ES, FS and GS keep what INIT and real_start left
; them, selector 0 and base 0 (64-bit mode ignores the bases of DS and ES,
; those of FS and GS are 0), until ap_entry's cpu_init_descriptors loads
; the kernel's. Under TCG each load ended a translated block, and a block
; is keyed on SS's B bit (QEMU's HF_SS32) but on none of the others: with
; the kernel's SS already, the AP runs the boot core's translations of
; cpu_init_descriptors instead of making its own (4 blocks).
bits 64
long_mode:
    mov ax, 0x10
    mov ss, ax
    mov eax, 1
    mov rbx, [p_ticket]
    lock xadd [rbx], eax
    cmp eax, [p_tickets]
    jae .hang               ; more APs than slots (a broadcast start): this one is not used
    mov rbx, [p_stacks]
    mov rsp, [rbx + rax * 8]
    mov edi, eax
    xor ebp, ebp
    mov rax, [p_entry]
    call rax
.hang:
    cli
    hlt
    jmp .hang
