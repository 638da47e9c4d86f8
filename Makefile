# SPDX-License-Identifier: MIT
# goro: one Makefile. `make` builds build/goro.elf and build/goro.iso.
# BUILD=dir puts every output elsewhere (parallel builds of one tree).

BUILD ?= build
CC := gcc
LD := ld
NASM := nasm
HOSTCC ?= gcc
PYTHON ?= python3
QEMU ?= qemu-system-x86_64

# ---- sources (explicit lists; add new files here) -------------------------

BOOT_ASM := boot/entry.asm boot/trampoline_blob.asm
BOOT_C := boot/multiboot.c

ARCH_ASM := arch/isr.asm arch/switch.asm
ARCH_C := arch/cpu.c arch/fpu.c arch/trap.c arch/paging.c arch/lapic.c \
          arch/tsc.c arch/smp.c arch/symbols.c arch/exit.c arch/stack.c arch/cpuinfo.c

DRIVERS_C := drivers/serial.c drivers/pit.c drivers/qemu_exit.c \
             drivers/acpi.c drivers/acpi_boot.c drivers/fw_cfg.c

KERNEL_C := kernel/main.c kernel/string.c kernel/printf.c kernel/console.c \
            kernel/spinlock.c kernel/panic.c kernel/cmdline.c kernel/page.c kernel/pagepool.c \
            kernel/app.c kernel/ktest.c kernel/machine.c \
            kernel/proc.c kernel/globrunq.c kernel/g.c kernel/procresize.c kernel/deadlock.c \
            kernel/stats.c kernel/runq.c \
            kernel/chan.c kernel/select.c kernel/sync.c kernel/sync_sema.c

# Compiled with vector registers allowed: code that runs only on a G's or
# g0's stack through ordinary calls, never in an interrupt.
KERNEL_VEC_C := kernel/printf_float.c

APPS_C := apps/hello.c apps/faults.c apps/ktest.c apps/bench.c apps/acpidump.c \
          apps/bench_chan.c apps/demos/worker_pool.c apps/demos/batching.c apps/demos/task_pool.c \
          apps/demos/prodcons.c apps/demos/locked_counter.c apps/demos/cancel.c apps/demos/webserver.c \
          apps/demos/all.c

KTEST_C := tests/kernel/test_basic.c tests/kernel/test_sched.c \
           tests/kernel/test_chan.c tests/kernel/test_sync.c

# An application from outside the tree: a directory of .c files or one file.
ifneq ($(APP_SRC),)
EXTRA_APP_C := $(if $(filter %.c,$(APP_SRC)),$(APP_SRC),$(wildcard $(APP_SRC)/*.c))
endif

# ---- flags ----------------------------------------------------------------

INCLUDES := -Ikernel -Iarch -Idrivers
COMMON_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -ffreestanding \
    -fno-stack-protector -fno-pic -fno-pie -mno-red-zone -mcmodel=small \
    -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
    -fno-asynchronous-unwind-tables -fcf-protection=none -MD -MP $(INCLUDES)
# Kernel code may run in interrupt context: general registers only, so an
# interrupt that does not switch goroutines never touches vector state.
KERNEL_CFLAGS := $(COMMON_CFLAGS) -mgeneral-regs-only
APP_CFLAGS := $(COMMON_CFLAGS)
NASMFLAGS := -f elf64 -g -F dwarf
LDFLAGS := -nostdlib -z noexecstack -z max-page-size=0x1000 --no-warn-rwx-segments -T linker.ld

# Quiet by default; V=1 shows every command.
ifeq ($(V),1)
Q :=
say = @true
else
Q := @
say = @printf '  %-7s %s\n' $(1) $(2)
endif

# ---- objects --------------------------------------------------------------

obj = $(patsubst %,$(BUILD)/obj/%.o,$(basename $(1)))
KOBJS := $(call obj,$(BOOT_C) $(ARCH_C) $(DRIVERS_C) $(KERNEL_C))
VOBJS := $(call obj,$(KERNEL_VEC_C))
AOBJS := $(call obj,$(APPS_C) $(KTEST_C))
XOBJS := $(patsubst %,$(BUILD)/obj/extapp/%.o,$(notdir $(basename $(EXTRA_APP_C))))
SOBJS := $(call obj,$(BOOT_ASM) $(ARCH_ASM))
OBJS := $(SOBJS) $(KOBJS) $(VOBJS) $(AOBJS) $(XOBJS)

.PHONY: all iso run debug test host bench clean deps
all: $(BUILD)/goro.elf $(BUILD)/goro.iso

$(KOBJS): $(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(KERNEL_CFLAGS) -c $< -o $@

$(VOBJS) $(AOBJS): $(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(APP_CFLAGS) -c $< -o $@

$(BUILD)/obj/extapp/%.o: $(filter %.c,$(EXTRA_APP_C))
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(APP_CFLAGS) -c $(filter %/$*.c $*.c,$(EXTRA_APP_C)) -o $@

$(BUILD)/trampoline.bin: boot/trampoline.asm
	@mkdir -p $(dir $@)
	$(Q)$(NASM) -f bin $< -o $@

$(BUILD)/obj/boot/trampoline_blob.o: boot/trampoline_blob.asm $(BUILD)/trampoline.bin
	@mkdir -p $(dir $@)
	$(Q)$(NASM) $(NASMFLAGS) -DTRAMPOLINE_BIN='"$(BUILD)/trampoline.bin"' $< -o $@

$(BUILD)/obj/%.o: %.asm
	@mkdir -p $(dir $@)
	$(call say,NASM,$<)
	$(Q)$(NASM) $(NASMFLAGS) $< -o $@

# Two links: the first gives the addresses, from which the backtrace symbol
# table (.ksyms, loaded last, so no code moves) is generated for the second.
$(BUILD)/empty_ksyms.o: tools/mksyms.py
	@mkdir -p $(dir $@)
	$(Q)$(PYTHON) tools/mksyms.py < /dev/null > $(BUILD)/empty_ksyms.asm
	$(Q)$(NASM) $(NASMFLAGS) $(BUILD)/empty_ksyms.asm -o $@

$(BUILD)/goro.pass1.elf: $(OBJS) $(BUILD)/empty_ksyms.o linker.ld
	$(Q)$(LD) $(LDFLAGS) -o $@ $(OBJS) $(BUILD)/empty_ksyms.o

$(BUILD)/ksyms.o: $(BUILD)/goro.pass1.elf tools/mksyms.py
	$(Q)nm -n $< | $(PYTHON) tools/mksyms.py > $(BUILD)/ksyms.asm
	$(Q)$(NASM) $(NASMFLAGS) $(BUILD)/ksyms.asm -o $@

$(BUILD)/goro.elf: $(OBJS) $(BUILD)/ksyms.o linker.ld
	$(call say,LD,$@)
	$(Q)$(LD) $(LDFLAGS) -o $@ $(OBJS) $(BUILD)/ksyms.o
	$(Q)nm -n $@ > $(BUILD)/goro.sym
	$(Q)objdump -d -M intel $@ > $(BUILD)/goro.dis

iso: $(BUILD)/goro.iso
$(BUILD)/goro.iso: $(BUILD)/goro.elf boot/grub.cfg
	@mkdir -p $(BUILD)/iso/boot/grub
	$(call say,ISO,$@)
	$(Q)cp $(BUILD)/goro.elf $(BUILD)/iso/boot/goro.elf
	$(Q)cp boot/grub.cfg $(BUILD)/iso/boot/grub/grub.cfg
	$(Q)grub-mkrescue -o $@ $(BUILD)/iso 2> $(BUILD)/grub-mkrescue.log || (cat $(BUILD)/grub-mkrescue.log; exit 1)

# ---- running --------------------------------------------------------------

APP ?=
ARGS ?=
SMP ?= 2
MEM ?= 512M
QEMU_BASE := -accel tcg -cpu max -smp $(SMP) -m $(MEM) -no-reboot -display none \
    -serial stdio -device isa-debug-exit,iobase=0xf4,iosize=0x04
CMDLINE := $(strip $(if $(APP),app=$(APP)) $(ARGS))

deps:
	@sh tools/deps.sh

run: deps $(BUILD)/goro.elf
	$(QEMU) $(QEMU_BASE) -kernel $(BUILD)/goro.elf -append "$(CMDLINE)"; \
	  code=$$?; echo "qemu exit $$code"; test $$code -eq 33

debug: deps $(BUILD)/goro.elf
	@echo "gdb $(BUILD)/goro.elf -ex 'target remote :1234'"
	$(QEMU) $(QEMU_BASE) -s -S -kernel $(BUILD)/goro.elf -append "$(CMDLINE)"

# ---- tests ----------------------------------------------------------------

# Host unit tests: tests/host/test_NAME.c linked with HOST_SRCS_NAME, under
# AddressSanitizer and UBSan, or HOST_SAN_NAME (the run queue: ThreadSanitizer).
HOST_TESTS := cmdline acpi runq page
HOST_SRCS_cmdline := kernel/cmdline.c
HOST_SRCS_acpi := drivers/acpi.c
HOST_SRCS_runq := kernel/runq.c
HOST_SRCS_page := kernel/pagepool.c
HOST_SAN_runq := thread
HOST_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -pthread -DGORO_HOST_TEST \
    -iquote kernel -iquote drivers -iquote arch -iquote tests/host

host: $(HOST_TESTS:%=$(BUILD)/host/test_%)
.SECONDEXPANSION:
$(BUILD)/host/test_%: tests/host/test_%.c $$(HOST_SRCS_$$*) tests/host/check.h
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_CFLAGS) -fsanitize=$(or $(HOST_SAN_$*),address,undefined) \
	    -fno-sanitize-recover=all $< $(HOST_SRCS_$*) -o $@

test: deps all host
	$(PYTHON) tests/run.py --build $(BUILD)

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
