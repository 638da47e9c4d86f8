# SPDX-License-Identifier: MIT
# goro: one Makefile. `make` builds build/goro.elf and build/goro.iso.
# BUILD=dir puts every output elsewhere (parallel builds of one tree).

BUILD ?= build
.DEFAULT_GOAL := all
# Every rule is written here: make's built-in ones only get in the way
# (with them, an included dependency file could be "remade" from a stale
# object rule: "gcc: fatal error: no input files").
MAKEFLAGS += --no-builtin-rules
.SUFFIXES:
CC := gcc
LD := ld
NASM := nasm
HOSTCC ?= gcc
PYTHON ?= python3
QEMU ?= qemu-system-x86_64

# ---- sources (explicit lists; add new files here) -------------------------

BOOT_ASM := boot/entry.asm boot/trampoline_blob.asm
BOOT_C := boot/boot.c boot/bootinfo.c boot/multiboot.c boot/uefi.c

ARCH_ASM := arch/isr.asm arch/switch.asm arch/preempt.asm arch/coldcall.asm
ARCH_C := arch/cpu.c arch/fpu.c arch/trap.c arch/paging.c arch/lapic.c \
          arch/tsc.c arch/refclock.c arch/smp.c arch/tsc_sync.c arch/platform.c arch/boot_marks.c arch/symbols.c \
          arch/exit.c arch/stack.c arch/cpuinfo.c arch/timer.c arch/xsave.c arch/static_branch.c arch/spinlock.c \
          arch/pit.c arch/qemu_exit.c arch/inject.c arch/tlb.c arch/msi.c arch/rtc.c arch/rtc_time.c

LIB_C := lib/string.c lib/printf.c

DRIVERS_C := drivers/serial.c \
             drivers/acpi.c drivers/acpi_boot.c drivers/acpi_numa.c drivers/fw_cfg.c \
             drivers/fb.c drivers/font8x16.c drivers/ioapic.c drivers/ps2kbd.c drivers/keydecode.c \
             drivers/acpi_mcfg.c drivers/dma.c drivers/pci/pci_cfg.c drivers/pci/pci.c drivers/pci/pci_irq.c \
             drivers/net/netdev.c drivers/net/virtqueue.c drivers/net/virtio_caps.c drivers/net/virtio_pci.c \
             drivers/net/virtio_net.c drivers/net/e1000e.c drivers/net/l2reflect.c drivers/net/probe.c

KERNEL_C := kernel/main.c kernel/boot_timeline.c kernel/console.c \
            kernel/panic.c kernel/cmdline.c kernel/page.c kernel/pagepool.c kernel/numa.c kernel/malloc.c \
            kernel/app.c kernel/ktest.c kernel/machine.c kernel/walltime.c kernel/probe.c kernel/debugdelay.c \
            kernel/proc.c kernel/globrunq.c kernel/g.c kernel/procresize.c kernel/deadlock.c \
            kernel/stats.c kernel/cpuset.c kernel/runq.c kernel/steal_order.c kernel/timer.c kernel/preempt.c kernel/sysmon.c kernel/timechan.c \
            kernel/chan.c kernel/select.c kernel/sync.c kernel/sync_sema.c \
            kernel/irqwait.c kernel/netpoll.c kernel/trace.c kernel/profile.c kernel/metrics.c kernel/inject.c

# The shell and the console input it reads (docs/console.md): kernel code,
# in a folder of its own above the scheduler.
SHELL_C := shell/shell.c shell/shell_run.c shell/shell_sched.c shell/shell_machine.c \
           shell/shell_metrics.c shell/shell_script.c shell/console_in.c shell/lineedit.c shell/shell_net.c \
           shell/acpidump.c

# The network stack (docs/net.md): goro's port of lwIP and its socket layer.
# lwIP's own sources are not in the tree: see "lwIP" below.
NET_C := net/stack.c net/ether.c net/netmem.c net/sys_arch.c net/addr.c net/conn.c net/udp.c net/hooks.c net/synq.c net/txq.c \
         net/syncookie.c

# Compiled with vector registers allowed: code that runs only on a G's or
# g0's stack through ordinary calls, never in an interrupt.
KERNEL_VEC_C := lib/printf_float.c kernel/printf_app.c

APPS_C := apps/hello.c apps/faults.c apps/bench.c \
          apps/bench_chan.c apps/demos/worker_pool.c apps/demos/batching.c apps/demos/task_pool.c \
          apps/demos/prodcons.c apps/demos/locked_counter.c apps/demos/cancel.c apps/demos/webserver.c \
          apps/demos/all.c apps/demos/timeout.c apps/bench_mem.c apps/echo.c apps/netecho.c \
          apps/bench_time.c apps/gobench.c apps/gobench_proc.c apps/gobench_chan.c \
          apps/gobench_select.c apps/gobench_sync.c apps/gobench_sema.c apps/gobench_time.c \
           apps/gobench_goro.c apps/gobench_floor.c apps/schedlat.c apps/bench_idle.c \
          apps/soak/soak_main.c apps/soak/soak_gen.c apps/soak/soak_check.c \
          apps/soak/soak_ops_chan.c apps/soak/soak_ops_sync.c apps/soak/soak_ops_time.c \
          apps/soak/soak_ops_sys.c apps/soak/soak_ops_big.c apps/soak/soak_ops_net.c \
          apps/cpuburn.c apps/flightrec.c apps/latency.c

# The network servers (docs/api.md, "Servers") and what they share
# (apps/netserve), which they include by its path from the top: the one
# part of the tree besides include/ that they see (check-layers holds them
# to it).
SERVERS_C := apps/netserve/netserve.c apps/httpd/httpd.c apps/httpd/http_parse.c \
             apps/kvd/kvd.c apps/kvd/kv_table.c apps/kvd/mc_exec.c apps/kvd/mc_meta.c apps/kvd/mc_prefix.c apps/kvd/mc_parse.c
APPS_C += $(SERVERS_C)

KTEST_C := tests/kernel/ktest_app.c tests/kernel/test_basic.c tests/kernel/test_clock.c tests/kernel/test_sched.c tests/kernel/test_preempt.c tests/kernel/test_stack.c \
           tests/kernel/test_chan.c tests/kernel/test_chan_pages.c tests/kernel/test_sync.c \
           tests/kernel/test_numa.c tests/kernel/test_malloc.c tests/kernel/test_irqwait.c tests/kernel/test_netpoll.c tests/kernel/test_timer_watch.c tests/kernel/test_timer_modify.c \
           tests/kernel/go_proc_test.c tests/kernel/test_sched_races.c \
           tests/kernel/go_chan_test.c tests/kernel/go_select_test.c tests/kernel/go_sema_test.c tests/kernel/go_sync_test.c \
           tests/kernel/go_time_test.c \
           tests/kernel/test_trace.c tests/kernel/test_tlb.c tests/kernel/test_x87.c tests/kernel/test_net.c

# In-kernel tests that call lwIP itself, compiled with its headers (NET_CFLAGS).
KTEST_NET_C := tests/kernel/test_net_port.c tests/kernel/test_net_txq.c tests/kernel/go_net_test.c

# An application from outside the tree: a directory of .c files or one file.
# Each object is named after its source's absolute path, so two apps'
# same-named files never share one; build/objs.list makes a change of
# APP_SRC relink even when every object is older than the image.
ifneq ($(APP_SRC),)
EXTRA_APP_C := $(abspath $(if $(filter %.c,$(APP_SRC)),$(APP_SRC),$(wildcard $(APP_SRC)/*.c)))
ifeq ($(EXTRA_APP_C),)
$(error APP_SRC=$(APP_SRC): no .c file there)
endif
endif

# ---- flags ----------------------------------------------------------------

# Every include names its path from the top ("kernel/sched.h"), so each
# cross-layer include shows at its line; tools/check/check_layers.py holds the
# rules. The public header is "goro.h" (include/goro.h) everywhere.
# Applications, in apps/ or from APP_SRC, see include/ alone: nothing else of
# the tree is reachable from their includes. APP_KERNEL_HEADERS=1 lets an
# APP_SRC application include the kernel's own headers too.
INCLUDES := -I. -Iinclude
APP_INCLUDES := -Iinclude
# -fstack-clash-protection: a frame of 4 KiB or more touches each of its
# pages, top down, as it is allocated (Debian's gcc leaves it off), so no
# frame jumps a goroutine's 4 KiB guard page into the stack below it: the
# first touch below the stack lands in the guard (docs/design.md,
# *Goroutine stacks*). It costs nothing in smaller frames.
COMMON_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -ffreestanding \
    -fno-stack-protector -fno-pic -fno-pie -mno-red-zone -mcmodel=small \
    -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
    -fno-asynchronous-unwind-tables -fcf-protection=none -MD -MP -ffunction-sections \
    -fstack-clash-protection
# make DEBUG=1: debug checks (sysmon reports a core that keeps interrupts
# off for over 1 ms, with where it is) and the delay points that widen race
# windows (kernel/debugdelay.h). Use a BUILD dir of its own; make test builds
# one in $(BUILD)/debug for the matrix's debug configurations.
ifeq ($(DEBUG),1)
COMMON_CFLAGS += -DGORO_DEBUG
endif
# make NOHOOKS=1: every static branch compiled out (always off, no NOP), the
# baseline of hooks-off-test's measurement of what the tools cost when off.
ifeq ($(NOHOOKS),1)
COMMON_CFLAGS += -DGORO_NO_STATIC_BRANCHES
endif
# Kernel code may run in interrupt context: general registers only, so an
# interrupt that does not switch goroutines never touches vector state.
# Its frames are bounded too (the build fails above the bound): the
# interrupt stacks (16 KiB) and g0 stacks (64 KiB) have no guard page, and
# with frames under the guard's size even code built without stack probing
# could not jump a goroutine's guard. Larger data goes on the heap.
KERNEL_FRAME_MAX := 3072
KERNEL_CFLAGS := $(COMMON_CFLAGS) $(INCLUDES) -mgeneral-regs-only -Wframe-larger-than=$(KERNEL_FRAME_MAX)
# Vector registers allowed: KERNEL_VEC_C and the in-kernel tests.
VEC_CFLAGS := $(COMMON_CFLAGS) $(INCLUDES)
APP_CFLAGS := $(COMMON_CFLAGS) $(APP_INCLUDES)
EXTAPP_CFLAGS := $(APP_CFLAGS) $(if $(filter 1,$(APP_KERNEL_HEADERS)),$(INCLUDES))
# lwIP and the code that includes its headers (net/, KTEST_NET_C): the
# kernel's flags, without the host's C library headers (-nostdinc: lwIP's
# <string.h> and the rest are goro's, net/lwip/libc), with lwIP's port
# headers (net/lwip: lwipopts.h, arch/cc.h) and its own. lwIP builds
# warning-free with these flags, -Wall -Wextra -Werror included, in both
# versions tools/build/fetch_lwip.sh accepts.
GCC_INCLUDE := $(shell $(CC) -print-file-name=include)
NET_CFLAGS = $(KERNEL_CFLAGS) -nostdinc -isystem $(GCC_INCLUDE) -Inet/lwip -Inet/lwip/libc -I$(LWIPDIR)/include
NASMFLAGS := -f elf64 -g -F dwarf
LDFLAGS := -nostdlib -z noexecstack -z max-page-size=0x1000 --no-warn-rwx-segments -L $(BUILD) -T linker.ld

# Quiet by default; V=1 shows every command.
ifeq ($(V),1)
Q :=
say = @true
else
Q := @
say = @printf '  %-7s %s\n' $(1) $(2)
endif

# ---- lwIP -----------------------------------------------------------------
#
# lwIP's sources come from Debian's source package `lwip`, fetched, checked
# against the sha256 in tools/build/fetch_lwip.sh and unpacked into
# LWIP_DIR the first time a build needs them (apt's source download: the
# network, once); LWIP_DIR/fetched names the version. The sub-builds
# (debug, nohooks) share the parent's LWIP_DIR.
LWIP_DIR ?= $(abspath $(BUILD))/lwip
export LWIP_DIR
LWIPDIR := $(LWIP_DIR)/src/src
$(LWIP_DIR)/fetched: tools/build/fetch_lwip.sh
	$(Q)sh tools/build/fetch_lwip.sh $(LWIP_DIR)
$(LWIPDIR)/%.c: | $(LWIP_DIR)/fetched ;

# IPv4, TCP, UDP, ARP, ICMP, DHCP and Ethernet: lwIP's core (its
# src/Filelists.mk's COREFILES and CORE4FILES, the same in 2.1 and 2.2 but
# for 2.2's acd.c, which these options leave out). What lwipopts.h turns
# off compiles to nothing.
LWIP_C := $(addprefix $(LWIPDIR)/,core/init.c core/def.c core/dns.c core/inet_chksum.c core/ip.c \
    core/mem.c core/memp.c core/netif.c core/pbuf.c core/raw.c core/stats.c core/sys.c \
    core/altcp.c core/altcp_alloc.c core/altcp_tcp.c core/tcp.c core/tcp_in.c core/tcp_out.c \
    core/timeouts.c core/udp.c core/ipv4/autoip.c core/ipv4/dhcp.c core/ipv4/etharp.c \
    core/ipv4/icmp.c core/ipv4/igmp.c core/ipv4/ip4_frag.c core/ipv4/ip4.c core/ipv4/ip4_addr.c \
    netif/ethernet.c)

# ---- objects --------------------------------------------------------------

obj = $(patsubst %,$(BUILD)/obj/%.o,$(basename $(1)))
KOBJS := $(call obj,$(LIB_C) $(BOOT_C) $(ARCH_C) $(DRIVERS_C) $(KERNEL_C) $(SHELL_C))
VOBJS := $(call obj,$(KERNEL_VEC_C) $(KTEST_C))
AOBJS := $(call obj,$(APPS_C))
NOBJS := $(call obj,$(NET_C) $(KTEST_NET_C))
LWIP_OBJS := $(patsubst $(LWIPDIR)/%.c,$(BUILD)/obj/lwip/%.o,$(LWIP_C))
XOBJS := $(patsubst /%.c,$(BUILD)/obj/extapp/%.o,$(EXTRA_APP_C))
SOBJS := $(call obj,$(BOOT_ASM) $(ARCH_ASM))
OBJS := $(SOBJS) $(KOBJS) $(VOBJS) $(AOBJS) $(NOBJS) $(LWIP_OBJS) $(XOBJS)

.PHONY: all iso run debug test host bench clean deps deps-bench check-layers check-atomics \
        check-tools check-deps check-docs check-commits lint test-stress soak
all: $(BUILD)/goro.elf $(BUILD)/goro.iso

# Stamps rewritten only when their text changes: the objects' flags (make
# DEBUG=1 in the same BUILD recompiles) and the list of objects linked.
define stamp
	@mkdir -p $(dir $@)
	@printf '%s\n' '$(1)' > $@.tmp
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp
endef
$(BUILD)/cflags.stamp: FORCE
	$(call stamp,$(KERNEL_CFLAGS) | $(VEC_CFLAGS) | $(APP_CFLAGS) | $(NET_CFLAGS) | $(NASMFLAGS))
$(BUILD)/extapp/cflags.stamp: FORCE
	$(call stamp,$(EXTAPP_CFLAGS))
$(BUILD)/objs.list: FORCE
	$(call stamp,$(OBJS))

$(KOBJS): $(BUILD)/obj/%.o: %.c $(BUILD)/cflags.stamp
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(KERNEL_CFLAGS) -c $< -o $@

$(VOBJS): $(BUILD)/obj/%.o: %.c $(BUILD)/cflags.stamp
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(VEC_CFLAGS) -c $< -o $@

$(AOBJS): $(BUILD)/obj/%.o: %.c $(BUILD)/cflags.stamp
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(APP_CFLAGS) -c $< -o $@
	$(APP_POST)
$(call obj,$(SERVERS_C)): APP_CFLAGS += -iquote .
# Go's benchmark ports: no function of theirs straddles a page, where
# QEMU's TCG would leave its translated code on every pass (the script
# says why). An object it failed to align is removed, so make redoes it.
$(call obj,$(filter apps/gobench%,$(APPS_C))): APP_POST = $(Q)$(PYTHON) tools/build/page_align.py $@ || { rm -f $@; exit 1; }
$(call obj,$(filter apps/gobench%,$(APPS_C))): tools/build/page_align.py

$(NOBJS): $(BUILD)/obj/%.o: %.c $(BUILD)/cflags.stamp $(LWIP_DIR)/fetched
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(NET_CFLAGS) -c $< -o $@

$(LWIP_OBJS): $(BUILD)/obj/lwip/%.o: $(LWIPDIR)/%.c $(BUILD)/cflags.stamp $(LWIP_DIR)/fetched
	@mkdir -p $(dir $@)
	$(call say,CC,lwip/$*.c)
	$(Q)$(CC) $(NET_CFLAGS) -c $< -o $@

$(XOBJS): $(BUILD)/obj/extapp/%.o: /%.c $(BUILD)/extapp/cflags.stamp
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(EXTAPP_CFLAGS) -c $< -o $@

$(BUILD)/trampoline.bin: boot/trampoline.asm
	@mkdir -p $(dir $@)
	$(Q)$(NASM) -f bin $< -o $@

$(BUILD)/obj/boot/trampoline_blob.o: boot/trampoline_blob.asm $(BUILD)/trampoline.bin
	@mkdir -p $(dir $@)
	$(Q)$(NASM) $(NASMFLAGS) -DTRAMPOLINE_BIN='"$(BUILD)/trampoline.bin"' $< -o $@

$(BUILD)/obj/%.o: %.asm $(BUILD)/cflags.stamp
	@mkdir -p $(dir $@)
	$(call say,NASM,$<)
	$(Q)$(NASM) $(NASMFLAGS) $< -o $@

# Two links: the first gives the addresses, from which the backtrace symbol
# table (.ksyms, loaded last, so no code moves) is generated for the second.
$(BUILD)/empty_ksyms.o: tools/build/mksyms.py
	@mkdir -p $(dir $@)
	$(Q)$(PYTHON) tools/build/mksyms.py < /dev/null > $(BUILD)/empty_ksyms.asm
	$(Q)$(NASM) $(NASMFLAGS) $(BUILD)/empty_ksyms.asm -o $@

# The boot's functions first, in the order they first run (boot/text_order.txt;
# -ffunction-sections gives each its own section to place).
$(BUILD)/text_order.ld: boot/text_order.txt
	@mkdir -p $(dir $@)
	$(Q)sed -e '/^#/d' -e '/^$$/d' -e 's/.*/*(.text.& .text.&.*)/' $< > $@

$(BUILD)/goro.pass1.elf: $(OBJS) $(BUILD)/empty_ksyms.o linker.ld $(BUILD)/text_order.ld $(BUILD)/objs.list
	$(Q)$(LD) $(LDFLAGS) -o $@ $(OBJS) $(BUILD)/empty_ksyms.o

$(BUILD)/ksyms.o: $(BUILD)/goro.pass1.elf tools/build/mksyms.py
	$(Q)nm -n $< | $(PYTHON) tools/build/mksyms.py > $(BUILD)/ksyms.asm
	$(Q)$(NASM) $(NASMFLAGS) $(BUILD)/ksyms.asm -o $@

$(BUILD)/goro.elf: $(OBJS) $(BUILD)/ksyms.o linker.ld $(BUILD)/text_order.ld $(BUILD)/objs.list
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

# tools/run/qemu.py builds the QEMU command line (TCG, the serial port on this
# terminal, isa-debug-exit) and succeeds only when the app returned 0.
APP ?=
ARGS ?=
SMP ?= 2
MEM ?= 512M
NUMA ?= 1
# NIC=virtio-modern|virtio-legacy|virtio|e1000e: a NIC on QEMU's user
# networking (tools/run/qemu.py --nic); MACHINE=q35 for the q35 chipset.
NIC ?=
MACHINE ?=
# NET=user: a NIC (NIC, default virtio) on QEMU's user networking with
# HOSTFWD=host:guest[,host:guest...] TCP ports forwarded from 127.0.0.1
# (default 8080:8080): make run APP=netecho NET=user HOSTFWD=21007:7.
# NET=tap (root): the NIC on a tap in network namespace TAP_NS (default
# goro-tap) that tools/net/netns.py makes for the run and removes after:
# one queue per vCPU (virtio-net: a queue pair each), 198.18.0.1 on the
# tap, busybox's DHCP server giving the guest 198.18.0.2. From another
# terminal: ip netns exec goro-tap ping 198.18.0.2 (docs/net.md).
NET ?=
comma := ,
HOSTFWD ?= 8080:8080
TAP_NS ?= goro-tap
ifeq ($(NET),user)
NIC := $(or $(NIC),virtio)
else ifeq ($(NET),tap)
NIC := $(or $(NIC),virtio)
TAP_QUEUES := $(if $(filter virtio%,$(NIC)),$(firstword $(subst $(comma), ,$(SMP))),1)
else ifneq ($(NET),)
$(error NET=$(NET): NET=user or NET=tap)
endif
CMDLINE := $(strip $(if $(APP),app=$(APP)) $(ARGS))
# The shell takes Ctrl-C itself (the running app's prompt back): QEMU then
# quits with Ctrl-A x.
RUN_QEMU = QEMU=$(QEMU) $(if $(filter tap,$(NET)),$(PYTHON) tools/net/netns.py run --queues $(TAP_QUEUES) --dhcp \
        $(TAP_NS) -- env QEMU=$(QEMU)) $(PYTHON) tools/run/qemu.py --smp $(SMP) --mem $(MEM) --numa $(NUMA) \
    $(if $(NIC),--nic $(NIC)) $(if $(filter user,$(NET)),$(foreach f,$(subst $(comma), ,$(HOSTFWD)),--hostfwd $(f))) \
    $(if $(filter tap,$(NET)),--tap $(TAP_NS)) \
    $(if $(MACHINE),--machine $(MACHINE)) \
    $(if $(filter shell,$(APP)),--ctrl-c-to-guest)

# What each target needs from Debian is listed once, in tools/deps.list.
# run, test, soak, bench, fuzz, lint, trace and profile first check their
# own list (deps-for-TARGET, tools/deps.sh): as root they install what is
# missing (without recommended extras), saying what and why; otherwise,
# or with GORO_NO_INSTALL=1, they print the exact command and stop. Then a
# sub-make builds, so that nothing is compiled before the compiler is
# there, whatever -j says. make deps and make deps-bench install test's
# and bench's lists.
DEPS_TARGETS := run test soak bench fuzz lint trace profile test-fresh
.PHONY: $(DEPS_TARGETS:%=deps-for-%)
$(DEPS_TARGETS:%=deps-for-%):
	@sh tools/deps.sh --auto $(@:deps-for-%=%)
deps:
	@sh tools/deps.sh --install test
deps-bench:
	@sh tools/deps.sh --install bench
# The build after the deps step uses every host CPU unless make was given
# -j itself: the README's plain `make test` need not build one file at a time.
BUILD_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 1))

run: deps-for-run
	@$(MAKE) --no-print-directory $(BUILD_JOBS) $(BUILD)/goro.elf
	@$(RUN_QEMU) $(BUILD)/goro.elf "$(CMDLINE)"

debug: deps-for-run
	@$(MAKE) --no-print-directory $(BUILD_JOBS) $(BUILD)/goro.elf
	@$(RUN_QEMU) --gdb $(BUILD)/goro.elf "$(CMDLINE)"

# profile: boots APP with the sampling profiler on (profile=$(PROFILE_HZ);
#   ARGS="profile=N" overrides), then tools/trace/profile2pprof.py writes
#   $(BUILD)/profile/cpu.pb.gz (go tool pprof), cpu.folded (flame graphs) and,
#   with matplotlib, cpu.png (tools/trace/flamegraph.py).
#   docs/observability.md says how to read them.
# trace: boots APP with the event trace on (trace=1), then writes
#   $(BUILD)/trace/trace.out (Go's execution trace: go tool trace) and
#   trace.json (Perfetto, ui.perfetto.dev), by tools/trace/trace2go.py and
#   tools/trace/trace2json.py.
.PHONY: trace
trace: deps-for-trace
	@$(MAKE) --no-print-directory $(BUILD_JOBS) $(BUILD)/goro.elf
	@mkdir -p $(BUILD)/trace
	@$(RUN_QEMU) $(BUILD)/goro.elf "trace=1 $(CMDLINE)" > $(BUILD)/trace/serial.log; \
	    st=$$?; grep -v '^TRACE [0-9]' $(BUILD)/trace/serial.log; exit $$st
	$(PYTHON) tools/trace/trace2go.py $(BUILD)/trace/serial.log -o $(BUILD)/trace/trace.out \
	    --elf $(BUILD)/goro.elf
	$(PYTHON) tools/trace/trace2json.py $(BUILD)/trace/serial.log -o $(BUILD)/trace/trace.json
	@echo "trace: go tool trace $(BUILD)/trace/trace.out; $(BUILD)/trace/trace.json in ui.perfetto.dev"

# trace-screenshot: make trace, then PNGs of go tool trace's pages,
#   rendered by headless chromium: $(BUILD)/trace/shot-goroutines.png (the
#   goroutines by start function), shot-goroutine.png (the largest group,
#   each goroutine's execution and wait times), shot-trace.png (the
#   timeline). tools/trace/tracepic.py; chromium is optional and installed only
#   on request (tools/trace/tracepic.py --install, as root).
.PHONY: trace-screenshot
trace-screenshot: trace
	$(PYTHON) tools/trace/tracepic.py $(BUILD)/trace/trace.out -o $(BUILD)/trace/shot \
	    --trace-height 200

PROFILE_HZ ?= 1000
.PHONY: profile
profile: deps-for-profile
	@$(MAKE) --no-print-directory $(BUILD_JOBS) $(BUILD)/goro.elf
	@mkdir -p $(BUILD)/profile
	@$(RUN_QEMU) $(BUILD)/goro.elf "profile=$(PROFILE_HZ) $(CMDLINE)" > $(BUILD)/profile/serial.log; \
	    st=$$?; grep -v '^PROFILE [0-9]' $(BUILD)/profile/serial.log; exit $$st
	$(PYTHON) tools/trace/profile2pprof.py $(BUILD)/profile/serial.log --elf $(BUILD)/goro.elf \
	    -o $(BUILD)/profile/cpu.pb.gz --folded $(BUILD)/profile/cpu.folded
	@if $(BENCH_PYTHON) -c 'import matplotlib' 2>/dev/null; then \
	    $(BENCH_PYTHON) tools/trace/flamegraph.py $(BUILD)/profile/cpu.folded \
	        -o $(BUILD)/profile/cpu.png \
	        --title "goro: $(CMDLINE), $(SMP) vCPUs"; \
	else echo "profile: no matplotlib, no cpu.png (apt-get install python3-matplotlib)"; fi
	@echo "profile: $(BUILD)/profile/cpu.pb.gz: go tool pprof -top $(BUILD)/goro.elf $(BUILD)/profile/cpu.pb.gz"

# ---- tests ----------------------------------------------------------------

# A host test that is a program run by a script: $@ runs the words $(1),
# absolute paths, from wherever the runner calls it.
define host_script
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexec %s\n' '$(1)' > $@
	$(Q)chmod +x $@
endef

# Host unit tests: tests/host/test_NAME.c linked with HOST_SRCS_NAME, under
# AddressSanitizer and UBSan, or HOST_SAN_NAME (the run queue: ThreadSanitizer).
HOST_TESTS := cmdline acpi acpi_numa runq steal_order page keydecode lineedit boot efi_loader \
              http_parse kvd loadgen_proto pci virtqueue rtc sizeclass
HOST_SRCS_cmdline := kernel/cmdline.c
HOST_SRCS_acpi := drivers/acpi.c drivers/acpi_mcfg.c
HOST_SRCS_acpi_numa := drivers/acpi.c drivers/acpi_numa.c
HOST_SRCS_runq := kernel/runq.c
HOST_SRCS_steal_order := kernel/steal_order.c
HOST_SRCS_page := kernel/pagepool.c
HOST_SRCS_keydecode := drivers/keydecode.c
HOST_SRCS_lineedit := shell/lineedit.c drivers/keydecode.c
HOST_SRCS_boot := boot/multiboot.c boot/bootinfo.c boot/uefi.c
HOST_SRCS_efi_loader := boot/efi/loader_parse.c
HOST_SRCS_http_parse := apps/httpd/http_parse.c
# test_httpd and test_kvd_conn include the servers' main files whole, over
# the network of tests/host/fakenet.h.
HOST_TESTS += httpd kvd_conn
HOST_SRCS_httpd := apps/httpd/http_parse.c apps/netserve/netserve.c
HOST_SRCS_kvd_conn := apps/kvd/mc_parse.c apps/kvd/mc_exec.c apps/kvd/mc_meta.c apps/kvd/mc_prefix.c apps/kvd/kv_table.c apps/netserve/netserve.c
HOST_SRCS_kvd := apps/kvd/mc_parse.c apps/kvd/mc_exec.c apps/kvd/mc_meta.c apps/kvd/mc_prefix.c apps/kvd/kv_table.c
HOST_SRCS_loadgen_proto := tools/net/loadgen/proto.c
HOST_SRCS_pci := drivers/pci/pci_cfg.c drivers/net/virtio_caps.c
HOST_SRCS_virtqueue := drivers/net/virtqueue.c
HOST_SRCS_rtc := arch/rtc_time.c
# malloc's size classes: the header alone (kernel/sizeclass.h, named below
# as the dependency a source list would otherwise bring).
HOST_SRCS_sizeclass :=
HOST_SAN_runq := thread
# UBSan too (a comma in $(or)'s own arguments would split them; in a
# variable's value it does not).
HOST_SAN_http_parse := address,undefined
HOST_SAN_httpd := address,undefined
HOST_SAN_kvd_conn := address,undefined
HOST_SAN_kvd := address,undefined
HOST_SAN_loadgen_proto := address,undefined
HOST_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -pthread -DGORO_HOST_TEST \
    -iquote . -iquote include -iquote tests/host

host: $(HOST_TESTS:%=$(BUILD)/host/test_%) $(BUILD)/tools/loadgen $(BUILD)/tools/l2send
$(BUILD)/host/test_httpd: apps/httpd/httpd.c tests/host/fakenet.h
$(BUILD)/host/test_kvd_conn: apps/kvd/kvd.c tests/host/fakenet.h
$(BUILD)/host/test_sizeclass: kernel/sizeclass.h
.SECONDEXPANSION:
$(BUILD)/host/test_%: tests/host/test_%.c $$(HOST_SRCS_$$*) \
    $$(wildcard $$(addsuffix *.h,$$(dir $$(HOST_SRCS_$$*)))) tests/host/check.h
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_CFLAGS) -fsanitize=$(or $(HOST_SAN_$*),address,undefined) \
	    -fno-sanitize-recover=all $< $(HOST_SRCS_$*) -o $@

# The open-loop load generator (tools/net/loadgen/loadgen.c; docs/performance.md,
# "Network servers"): a host program, built with the host tests.
LOADGEN := $(BUILD)/tools/loadgen
.PHONY: loadgen
loadgen: $(LOADGEN)
$(LOADGEN): tools/net/loadgen/loadgen.c tools/net/loadgen/proto.c tools/net/loadgen/proto.h
	@mkdir -p $(dir $@)
	$(call say,HOSTCC,$@)
	$(Q)$(HOSTCC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -pthread -iquote . $(filter %.c,$^) -o $@ -lm

# tools/bench/l2floor.py's sender over a tap (tools/net/l2send.c): a host
# program, built with the host tests.
L2SEND := $(BUILD)/tools/l2send
.PHONY: l2send
l2send: $(L2SEND)
$(L2SEND): tools/net/l2send.c
	@mkdir -p $(dir $@)
	$(call say,HOSTCC,$@)
	$(Q)$(HOSTCC) -std=gnu11 -O2 -g -Wall -Wextra -Werror $< -o $@

# ---- fuzzing (docs/testing.md, "Fuzzing") -------------------------------------
#
# libFuzzer harnesses tests/fuzz/fuzz_NAME.c, linked with FUZZ_SRCS_NAME,
# built with clang under AddressSanitizer and UBSan (no recovery) into
# BUILD/fuzz/fuzz_NAME. `make fuzz` runs each for FUZZ_SECONDS (seeded from
# tests/fuzz/corpus/NAME, new inputs kept in BUILD/fuzz/corpus/NAME);
# `make test` replays each corpus with a short fixed run (tests/fuzz/fuzzrun.py).
# Without clang the harnesses are not built and the runner reports SKIP.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 1
FUZZ_HARNESSES := acpi acpi_numa cmdline multiboot1 multiboot2 uefi_mmap efi_elf efi_cmdline keys \
                  http memcache pci netrx
FUZZ_SRCS_acpi := drivers/acpi.c drivers/acpi_mcfg.c
FUZZ_SRCS_acpi_numa := drivers/acpi.c drivers/acpi_numa.c
FUZZ_SRCS_cmdline := kernel/cmdline.c
FUZZ_SRCS_multiboot1 := boot/multiboot.c boot/bootinfo.c
FUZZ_SRCS_multiboot2 := boot/multiboot.c boot/bootinfo.c
FUZZ_SRCS_uefi_mmap := boot/efi/loader_parse.c boot/uefi.c boot/bootinfo.c
FUZZ_SRCS_efi_elf := boot/efi/loader_parse.c
FUZZ_SRCS_efi_cmdline := boot/efi/loader_parse.c
FUZZ_SRCS_keys := drivers/keydecode.c shell/lineedit.c
FUZZ_SRCS_http := apps/httpd/http_parse.c
FUZZ_SRCS_memcache := apps/kvd/mc_parse.c apps/kvd/mc_exec.c apps/kvd/mc_meta.c apps/kvd/mc_prefix.c apps/kvd/kv_table.c
FUZZ_SRCS_pci := drivers/pci/pci_cfg.c drivers/net/virtio_caps.c
# The receive path: lwIP's port and goro's sockets over lwIP, with lwIP
# itself (FUZZ_LWIP_OBJS: its sources from LWIP_DIR, on the host's C
# library, so its memory is the host's malloc and ASan sees every block).
FUZZ_SRCS_netrx := net/ether.c net/stack.c net/hooks.c net/synq.c net/txq.c net/syncookie.c net/conn.c net/udp.c net/addr.c net/sys_arch.c
FUZZ_LWIP_OBJS := $(patsubst $(LWIPDIR)/%.c,$(BUILD)/fuzz/obj/lwip/%.o,$(LWIP_C))
FUZZ_EXTRA_netrx := $(FUZZ_LWIP_OBJS)
FUZZ_NET_CFLAGS = -Inet/lwip -I$(LWIPDIR)/include
# The parsers are compiled with libFuzzer's coverage and comparison tracing;
# the harnesses themselves without it: their checks are not what the fuzzer
# should explore, and tracing every comparison of an O(n^2) check had them
# spend most of their time there (twice the executions per second without).
FUZZ_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -DGORO_HOST_TEST -iquote . -iquote include \
    -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_HEADERS := $(wildcard tests/fuzz/*.h boot/*.h boot/efi/*.h drivers/acpi*.h kernel/cmdline.h \
    drivers/keydecode.h shell/lineedit.h apps/httpd/http_parse.h apps/kvd/*.h drivers/pci/*.h \
    drivers/net/virtio_caps.h tests/host/pci_fake.h)
FUZZ_BINS := $(FUZZ_HARNESSES:%=$(BUILD)/fuzz/fuzz_%)

# Built only where clang has its libFuzzer runtime (make test installs both;
# it is in lib/linux/ on Debian, lib/x86_64-pc-linux-gnu/ in LLVM's own layout).
.PHONY: fuzz fuzz-build
fuzz-build:
	@if ls "$$($(FUZZ_CC) -print-resource-dir 2>/dev/null)"/lib/*/libclang_rt.fuzzer*.a > /dev/null 2>&1; then \
	    $(MAKE) --no-print-directory $(FUZZ_BINS); \
	else \
	    echo "fuzz: $(FUZZ_CC) with libFuzzer not found; harnesses not built (make deps installs them)"; \
	fi

$(BUILD)/fuzz/obj/tests/fuzz/fuzz_%.o: tests/fuzz/fuzz_%.c $(FUZZ_HEADERS)
	@mkdir -p $(dir $@)
	$(call say,FUZZCC,$<)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(if $(filter netrx,$*),$(FUZZ_NET_CFLAGS)) -c $< -o $@
$(BUILD)/fuzz/obj/tests/fuzz/fuzz_netrx.o $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(FUZZ_SRCS_netrx)): \
    $(LWIP_DIR)/fetched $(wildcard net/*.h net/lwip/*.h net/lwip/arch/*.h)
$(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(FUZZ_SRCS_netrx)): FUZZ_CFLAGS += $(FUZZ_NET_CFLAGS)

$(FUZZ_LWIP_OBJS): $(BUILD)/fuzz/obj/lwip/%.o: $(LWIPDIR)/%.c $(LWIP_DIR)/fetched $(wildcard net/lwip/*.h net/lwip/arch/*.h)
	@mkdir -p $(dir $@)
	$(call say,FUZZCC,lwip/$*.c)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_NET_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(BUILD)/fuzz/obj/%.o: %.c $(FUZZ_HEADERS)
	@mkdir -p $(dir $@)
	$(call say,FUZZCC,$<)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

.PRECIOUS: $(BUILD)/fuzz/obj/%.o $(BUILD)/fuzz/obj/tests/fuzz/fuzz_%.o
fuzz_objs = $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(FUZZ_SRCS_$(1)))
$(BUILD)/fuzz/fuzz_%: $(BUILD)/fuzz/obj/tests/fuzz/fuzz_%.o $$(call fuzz_objs,$$*) $$(FUZZ_EXTRA_$$*)
	$(call say,FUZZLD,$@)
	$(Q)$(FUZZ_CC) -fsanitize=fuzzer,address,undefined $^ -o $@

fuzz: deps-for-fuzz
	@$(MAKE) --no-print-directory $(BUILD_JOBS) fuzz-build
	$(PYTHON) tests/fuzz/fuzzrun.py --build $(BUILD) --seconds $(FUZZ_SECONDS) --jobs $(FUZZ_JOBS)

# make fuzz-coverage: the parsers' lines and branches that the checked-in
# corpus reaches (source-based coverage, llvm-cov), every harness together.
FUZZ_COV_CFLAGS := -std=gnu11 -O1 -g -DGORO_HOST_TEST -iquote . -iquote include -fsanitize=fuzzer \
    -fprofile-instr-generate -fcoverage-mapping
.PHONY: fuzz-coverage
fuzz-coverage: deps-for-fuzz
	@$(MAKE) --no-print-directory $(BUILD_JOBS) $(FUZZ_HARNESSES:%=$(BUILD)/fuzz/cov/fuzz_%)
	$(PYTHON) tests/fuzz/fuzzrun.py --build $(BUILD) --coverage

$(BUILD)/fuzz/cov/fuzz_%: tests/fuzz/fuzz_%.c $$(FUZZ_SRCS_$$*) $(FUZZ_HEADERS)
	@mkdir -p $(dir $@)
	$(call say,FUZZCOV,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_COV_CFLAGS) $(if $(filter netrx,$*),$(FUZZ_NET_CFLAGS) $(LWIP_C)) $< $(FUZZ_SRCS_$*) -o $@

# The docs say what the tree has: generated figures match their data, the
# paths, links and make targets named exist, the README's tree is whole,
# every page a comment cites exists, no history, and docs/*.md together
# stay under their line budget (tools/check/check_docs.py).
check-docs:
	@$(PYTHON) tools/check/check_docs.py

# The include rules between layers (lib < arch, drivers < kernel < apps).
check-layers:
	@$(PYTHON) tools/check/check_layers.py

# Every __atomic call below apps/ says its ordering and what it pairs with.
check-atomics:
	@$(PYTHON) tools/check/check_atomics.py

# The Python tools' shared helpers, and the parsers of the tools that need
# root to run (boot_qemu_probe.py), by their examples (doctest).
DOCTESTS := tools/trace/varint.py tools/run/qemu.py tools/bench/boot_qemu_probe.py \
            tools/bench/boot_blocks.py tools/check/check_deps.py tests/net/netcheck.py \
            tools/check/check_docs.py tools/bench/figures.py tests/net/check_kvd.py \
            tools/bench/idlelook.py tools/bench/linux_guest.py
check-tools:
	@for f in $(DOCTESTS); do \
	    $(PYTHON) -m doctest $$f || exit 1; echo "check-tools: $$f's examples hold"; \
	done

# Every program the targets run is in tools/deps.list for that target
# (tools/check/check_deps.py); make test runs it as the host test test_deps.
.PHONY: check-deps
check-deps:
	@$(PYTHON) tools/check/check_deps.py
$(BUILD)/host/test_deps: tools/check/check_deps.py tools/deps.list
	$(call host_script,$(PYTHON) $(abspath tools/check/check_deps.py) --tests)
host: $(BUILD)/host/test_deps

# The runner's own promise (tests/host/test_runner.py): a check that breaks
# is one failure, and the closing line is always printed.
$(BUILD)/host/test_runner: tests/host/test_runner.py
	$(call host_script,$(PYTHON) $(abspath tests/host/test_runner.py))
host: $(BUILD)/host/test_runner

# The virtqueue's device fences as compiled: mfence, never a locked no-op
# (tests/host/test_devfence.py says why).
$(BUILD)/host/test_devfence: tests/host/test_devfence.py $(BUILD)/obj/drivers/net/virtqueue.o
	$(call host_script,$(PYTHON) $(abspath tests/host/test_devfence.py) \
	    $(abspath $(BUILD)/obj/drivers/net/virtqueue.o))
host: $(BUILD)/host/test_devfence

# The event trace's time order, and trace2go's against Go's parser
# (tests/host/test_trace2go.py), on a dump whose times went back.
$(BUILD)/host/test_trace2go: tests/host/test_trace2go.py tools/trace/trace2go.py \
                             tools/trace/trace2json.py
	$(call host_script,$(PYTHON) $(abspath tests/host/test_trace2go.py))
host: $(BUILD)/host/test_trace2go

# make lint: clang-tidy (.clang-tidy names the checks, and why some are off)
# and cppcheck's warning and portability checks over the kernel's C; any
# finding fails. A finding suppressed at its line says why there.
LINT_C := $(LIB_C) $(KERNEL_VEC_C) $(BOOT_C) $(ARCH_C) $(filter-out drivers/font8x16.c,$(DRIVERS_C)) \
          $(KERNEL_C) $(SHELL_C)
CLANG_TIDY ?= clang-tidy
CPPCHECK ?= cppcheck
# Linted as the debug build, which compiles a superset of the code (the
# lock-rank check, sysmon's irq-off report).
LINT_CFLAGS := -std=gnu11 -ffreestanding -mno-red-zone -DGORO_DEBUG $(INCLUDES)
# cppcheck 2.13 on (Debian 13's 2.17) cannot parse asm goto, and a file it
# cannot parse it does not check: it reads the NOHOOKS build's static
# branches instead (arch/static_branch.h). Its note that it limited the
# branches it follows in a long function is not a finding. The kernel's
# malloc and calloc never return NULL (running out of memory is fatal,
# goro.h), so its *OutOfMemory findings, which assume they may, are off.
CPPCHECK_FLAGS := --std=c11 --enable=warning,portability --inline-suppr --quiet --error-exitcode=1 \
    --platform=unix64 -D__x86_64__ -D__GNUC__ -DGORO_DEBUG -DGORO_NO_STATIC_BRANCHES \
    --suppress=normalCheckLevelMaxBranches --suppress=nullPointerOutOfMemory \
    --suppress=ctunullpointerOutOfMemory --suppress=nullPointerArithmeticOutOfMemory $(INCLUDES)

# net/ with lwIP's headers, and the port's C library before the host's.
LINT_NET_FLAGS = -Inet/lwip -Inet/lwip/libc -I$(LWIPDIR)/include

.PHONY: lint-files
lint: deps-for-lint
	@$(MAKE) --no-print-directory $(BUILD_JOBS) lint-files
lint-files: $(LINT_C:%.c=$(BUILD)/lint/%.tidy) $(NET_C:%.c=$(BUILD)/lint/%.tidy) \
            $(BUILD)/lint/cppcheck.stamp $(BUILD)/lint/cppcheck-net.stamp check-commits
$(NET_C:%.c=$(BUILD)/lint/%.tidy): LINT_CFLAGS += $(LINT_NET_FLAGS)

# Commit subjects of at most 72 characters, the why in the body: every
# commit since the rule began (tools/check/check_commits.py).
check-commits:
	@$(PYTHON) tools/check/check_commits.py

# A stamp per file. The file's object is a prerequisite so that a changed
# header, which rebuilds the object (-MD), lints the file again.
$(BUILD)/lint/%.tidy: %.c $(BUILD)/obj/%.o .clang-tidy
	@mkdir -p $(dir $@)
	$(call say,TIDY,$<)
	$(Q)$(CLANG_TIDY) --quiet $< -- $(LINT_CFLAGS) > $@.log 2>&1 || (cat $@.log; exit 1)
	$(Q)touch $@

$(BUILD)/lint/cppcheck.stamp: $(LINT_C) $(call obj,$(LINT_C))
	@mkdir -p $(dir $@)
	$(call say,CPPCHECK,$@)
	$(Q)$(CPPCHECK) $(CPPCHECK_FLAGS) $(LINT_C)
	$(Q)touch $@

$(BUILD)/lint/cppcheck-net.stamp: $(NET_C) $(call obj,$(NET_C))
	@mkdir -p $(dir $@)
	$(call say,CPPCHECK,$@)
	$(Q)$(CPPCHECK) $(CPPCHECK_FLAGS) $(LINT_NET_FLAGS) $(NET_C)
	$(Q)touch $@

# The Makefile's own behaviours (APP_SRC switches, stale rules, deps that
# are checked, not installed): a shell script the runner runs as a host test.
$(BUILD)/host/test_make: tests/host/test_make.sh
	$(call host_script,sh $(abspath tests/host/test_make.sh) $(CURDIR) $(abspath $(BUILD)))
host: $(BUILD)/host/test_make

# The L2 reflector from the host (tools/bench/l2floor.py --check): frames
# sent over QEMU's dgram backend to app=l2reflect come back, every NIC
# model, from the script and from the C sender (tools/net/l2send.c), which
# makes the script's frames and refuses damaged ones; then, as root only
# (SKIP otherwise), a multiqueue virtio-net over a tap in a namespace of
# its own, a queue pair per vCPU at 1, 2, 4 and 8 vCPUs, spreads the C
# sender's frames over its pairs, each pair's interrupt on its own core.
# Counts only, never a rate.
$(BUILD)/host/test_l2floor: tools/bench/l2floor.py | $(BUILD)/tools/l2send
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexport QEMU=%s\n%s %s --check --elf %s || exit 1\nexec %s %s --check --tap --smp 1,2,4,8 --frames 2000 --elf %s\n' \
	    '$(QEMU)' '$(PYTHON)' '$(abspath tools/bench/l2floor.py)' '$(abspath $(BUILD))/goro.elf' \
	    '$(PYTHON)' '$(abspath tools/bench/l2floor.py)' '$(abspath $(BUILD))/goro.elf' > $@
	$(Q)chmod +x $@
host: $(BUILD)/host/test_l2floor

# goro's servers from the host (tests/net/goro_servers.py): app=httpd and
# app=kvd at 1, 2 and 4 vCPUs on QEMU's user networking, each through a
# port picked free, checked by tests/net's check_httpd.py and check_kvd.py
# (curl, Python's and Go's HTTP clients, netcat, memcaslap, memccapable, raw
# sockets). Answers and counts only.
$(BUILD)/host/test_servers: tests/net/goro_servers.py tests/net/check_httpd.py tests/net/check_kvd.py \
        tests/net/check_preempt.py tests/net/netcheck.py
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexport QEMU=%s\nexec %s %s --build %s\n' \
	    '$(QEMU)' '$(PYTHON)' '$(abspath tests/net/goro_servers.py)' '$(abspath $(BUILD))' > $@
	$(Q)chmod +x $@
host: $(BUILD)/host/test_servers

# test-conns: 10,000 idle keep-alive connections on app=httpd at 2 vCPUs
# (tests/net/goro_conns.py, tests/net/check_conns.py): opened, held idle
# while /stats shows the cores halting and no goroutine running, each
# then served, all closed. Over a tap as root; otherwise 1,000 over user
# networking, and a SKIP line for the 10,000. Counts only. Not in make
# test: it takes minutes (tests/net/README.md).
.PHONY: test-conns
test-conns: deps-for-test
	@$(MAKE) --no-print-directory $(BUILD_JOBS) $(BUILD)/goro.elf
	QEMU=$(QEMU) $(PYTHON) tests/net/goro_conns.py --build $(BUILD)

# A host client against app=netecho over each NIC model on QEMU's user
# networking (tools/net/echo_check.py): 4 MiB echoed on one connection,
# then 100 connections at once, every byte compared; then virtio-net once
# more on the UEFI boot (OVMF, q35). Counts only.
$(BUILD)/host/test_netecho: tools/net/echo_check.py
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexport QEMU=%s\n%s %s --elf %s || exit 1\nexec %s %s --boot efi --nic virtio-modern --no-static --elf %s\n' \
	    '$(QEMU)' '$(PYTHON)' '$(abspath tools/net/echo_check.py)' '$(abspath $(BUILD))/goro.elf' \
	    '$(PYTHON)' '$(abspath tools/net/echo_check.py)' '$(abspath $(BUILD))/goro.elf' > $@
	$(Q)chmod +x $@
host: $(BUILD)/host/test_netecho

# The echo matrix (tools/net/echo_check.py): app=netecho on each NIC model
# at 1, 2, 4 and 8 vCPUs, on the -kernel and the UEFI boot: 100 MiB echoed
# on one connection, then 1000 connections at once, every byte compared;
# the table (bytes, connections, QEMU CPU seconds) in the build directory.
# 24 guests, two at a time at low priority: run it on purpose, not in CI.
NET_MATRIX_ARGS ?= --jobs 2
.PHONY: test-net-matrix
test-net-matrix: deps-for-test
	@$(MAKE) --no-print-directory $(BUILD_JOBS) all efi
	nice -n 5 $(PYTHON) tools/net/echo_check.py --elf $(BUILD)/goro.elf --boot kernel,efi \
	    --smp 1,2,4,8 --mib 100 --conns 1000 --no-static --table $(BUILD)/net-matrix.md $(NET_MATRIX_ARGS)

# Malformed frames at app=netecho (tools/net/badframes.py): over QEMU's
# dgram backend from 127.0.0.1 with virtio-net and e1000e; then, as root
# only (SKIP otherwise), over a tap in a namespace of its own, with a ping
# and a connection from the namespace's kernel after. Counts only.
$(BUILD)/host/test_badframes: tools/net/badframes.py
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexport QEMU=%s\n%s %s --nic virtio-modern,e1000e --elf %s || exit 1\nexec %s %s --tap --elf %s\n' \
	    '$(QEMU)' '$(PYTHON)' '$(abspath tools/net/badframes.py)' '$(abspath $(BUILD))/goro.elf' \
	    '$(PYTHON)' '$(abspath tools/net/badframes.py)' '$(abspath $(BUILD))/goro.elf' > $@
	$(Q)chmod +x $@
host: $(BUILD)/host/test_badframes

# The soak (docs/testing.md, *Soak*): app=soak over machine shapes, seeds,
# time slices and round widths for MINUTES, two runs at once, at the lowest
# priority; stops at the first failure with its replay command. It goes on
# from where the last make soak stopped (BUILD/soak-logs/state.json), so a
# long soak can span boots. SOAK_ARGS passes options (--seed, --ops,
# --smp 1,2,4, --jobs N, --fresh).
MINUTES ?= 10
SOAK_ARGS ?=
soak: deps-for-soak
	@$(MAKE) --no-print-directory $(BUILD_JOBS) $(BUILD)/goro.elf
	nice -n 19 $(PYTHON) tools/run/soak.py --build $(BUILD) --minutes $(MINUTES) $(SOAK_ARGS)

# RUN_ARGS passes options to the runner (--filter, --seed, -v ...). What the
# runner runs is built first: the images, the host tests (among them the
# insncount plugin's, the hooks' cost and the deps list's, BUILD/host/test_*),
# the fuzz harnesses, and the static checks.
RUN_ARGS ?=
TEST_BUILD := all efi usb host fuzz-build check-layers check-atomics check-tools check-docs \
              debug-build
test: deps-for-test
	@$(MAKE) --no-print-directory $(BUILD_JOBS) $(TEST_BUILD) lint-files
	$(PYTHON) tests/run.py --build $(BUILD) $(RUN_ARGS)

# The README's two commands on fresh Debian 12 and 13 roots (debootstrap
# minbase plus git and make), as root: how a new dependency is proven
# (docs/testing.md, "Dependencies"). FRESH_ROOTS=bookworm picks one.
.PHONY: test-fresh
test-fresh: deps-for-test-fresh
	sh tools/run/test_fresh.sh $(BUILD) .

# The suite while the host runs one CPU-bound process per core beside it:
# no test may fail because the host is slow (docs/testing.md). With it the
# heavy configurations, hundreds of vCPUs for minutes each (tests/run.py
# --list marks them): 23 minutes one after another on this 2-core host,
# beside other jobs, on top of the suite's 11 to 25.
test-stress: deps-for-test
	@$(MAKE) --no-print-directory $(BUILD_JOBS) $(TEST_BUILD)
	$(PYTHON) tools/run/stress.py -- $(PYTHON) tests/run.py --build $(BUILD) --heavy $(RUN_ARGS)

# The scale configurations alone (tests/run.py --scale): full ktest at 256,
# 512 and 1024 vCPUs and on 8 NUMA nodes of 256, 20 minutes to hours each on
# this 2-core host (alone: 21 minutes at 256 vCPUs, 50 at 512, 99 at 1024;
# 48 at 256 beside other jobs); hello at 512 and 1024 vCPUs and the soak at
# 1024, whose boots test-stress's soak-smp512 and tickets-smp1026 make too
# (hello at 1024 took 16 minutes). Kept out of test-stress so that it ends
# within the hour. Run them where cores are many, or one at a time
# (RUN_ARGS=--filter=NAME).
.PHONY: test-scale
test-scale: deps-for-test
	@$(MAKE) --no-print-directory $(BUILD_JOBS) all
	$(PYTHON) tests/run.py --build $(BUILD) --scale $(RUN_ARGS)

# ---- insncount: the project's QEMU TCG instruction-count plugin -------------
#
# tools/insncount (docs/performance.md): counts guest instructions per vCPU,
# reports them at marker NOPs and at exit. insncount-test boots a multiboot
# guest with loops of known length (tests/insncount) and checks the counts.
INSNCOUNT := $(BUILD)/insncount/libinsncount.so
.PHONY: insncount insncount-test
insncount: $(INSNCOUNT)
$(INSNCOUNT): tools/insncount/insncount.c tools/insncount/qemu-plugin-api.h \
              tools/build/build_insncount.sh
	$(call say,PLUGIN,$@)
	$(Q)BUILD=$(BUILD) HOSTCC=$(HOSTCC) sh tools/build/build_insncount.sh > /dev/null

$(BUILD)/insncount/guest.elf: tests/insncount/guest.S
	@mkdir -p $(dir $@)
	$(Q)$(HOSTCC) -m32 -c $< -o $(BUILD)/insncount/guest.o
	$(Q)$(LD) -m elf_i386 -Ttext=0x100000 -e _start -o $@ $(BUILD)/insncount/guest.o

insncount-test: $(INSNCOUNT) $(BUILD)/insncount/guest.elf
	$(Q)QEMU=$(QEMU) $(PYTHON) tests/insncount/check.py $(INSNCOUNT) $(BUILD)/insncount/guest.elf

# hooks-off-test: the tools' hooks (trace, metrics, profile), off, cost no
# more than their NOPs: insn/op of the yield and channel benchmarks against
# a build with them compiled out (NOHOOKS=1, in $(BUILD)/nohooks), under
# the insncount plugin with -icount (exact counts; no time is measured).
.PHONY: hooks-off-test nohooks-build
hooks-off-test: $(INSNCOUNT) $(BUILD)/goro.elf nohooks-build
	$(Q)QEMU=$(QEMU) $(PYTHON) tests/insncount/hooks_off.py $(INSNCOUNT) $(BUILD)/goro.elf $(BUILD)/nohooks/goro.elf
nohooks-build:
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/nohooks NOHOOKS=1 $(BUILD)/nohooks/goro.elf

# make test runs these as host tests (the runner's PASS/FAIL lines, a crash
# one failure among the others): BUILD/host/test_insncount, test_hooks_off,
# and test_knownwork (gobench's counts of a known RunParallel op on 1, 2
# and 4 vCPUs, tests/insncount/knownwork.py).
$(BUILD)/host/test_insncount: $(INSNCOUNT) $(BUILD)/insncount/guest.elf tests/insncount/check.py
	$(call host_script,env QEMU=$(QEMU) $(PYTHON) $(abspath tests/insncount/check.py) \
	    $(abspath $(INSNCOUNT)) $(abspath $(BUILD)/insncount/guest.elf))
$(BUILD)/host/test_hooks_off: $(INSNCOUNT) $(BUILD)/goro.elf nohooks-build tests/insncount/hooks_off.py
	$(call host_script,env QEMU=$(QEMU) $(PYTHON) $(abspath tests/insncount/hooks_off.py) \
	    $(abspath $(INSNCOUNT)) $(abspath $(BUILD)/goro.elf) $(abspath $(BUILD)/nohooks/goro.elf))
$(BUILD)/host/test_knownwork: $(INSNCOUNT) $(BUILD)/goro.elf tests/insncount/knownwork.py
	$(call host_script,env QEMU=$(QEMU) $(PYTHON) $(abspath tests/insncount/knownwork.py) \
	    $(abspath $(INSNCOUNT)) $(abspath $(BUILD)/goro.elf))
host: $(BUILD)/host/test_insncount $(BUILD)/host/test_hooks_off $(BUILD)/host/test_knownwork

.PHONY: debug-build
debug-build:
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/debug DEBUG=1 $(BUILD)/debug/goro.elf

clean:
	rm -rf $(BUILD)

# The dependency files of this build's objects only: an earlier APP_SRC's
# are not this build's business.
-include $(OBJS:.o=.d) $(BUILD)/efi/loader.d $(BUILD)/efi/loader_parse.d

# ---- UEFI: the GNU-EFI loader and the boot images ----------------------------
#
# efi: build/goro-efi.img, a partitionless FAT disk (an ESP) holding
#   EFI/BOOT/BOOTX64.EFI (boot/efi/loader.c), goro.elf and, when CMDLINE is
#   set, goro.cmdline. Boot it with OVMF: -drive format=raw,file=goro-efi.img.
# usb: build/goro-usb.img, to dd onto a stick: grub-mkrescue's hybrid ISO
#   (BIOS -> GRUB -> multiboot2) whose EFI system partition is replaced by
#   one with the GNU-EFI loader (tools/build/mkusb.sh says how).

EFI_INC := /usr/include/efi
EFI_LIB := /usr/lib
EFI_CFLAGS := -std=gnu11 -O2 -Wall -Wextra -Werror -fpic -ffreestanding -fno-stack-protector \
    -fshort-wchar -mno-red-zone -maccumulate-outgoing-args \
    -I$(EFI_INC) -I$(EFI_INC)/x86_64 -I. -MD -MP
EFI_LDFLAGS := -nostdlib -znocombreloc -shared -Bsymbolic -T $(EFI_LIB)/elf_x86_64_efi.lds
EFI_SECTIONS := -j .text -j .sdata -j .data -j .rodata -j .dynamic -j .dynsym \
    -j .rel -j .rela -j '.rel.*' -j '.rela.*' -j .reloc
EFI_IMG_MB := 32

.PHONY: efi usb
efi: $(BUILD)/goro-efi.img
usb: $(BUILD)/goro-usb.img

EFI_OBJS := $(BUILD)/efi/loader.o $(BUILD)/efi/loader_parse.o

$(EFI_OBJS): $(BUILD)/efi/%.o: boot/efi/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(EFI_CFLAGS) -c $< -o $@

$(BUILD)/efi/loader.so: $(EFI_OBJS)
	$(Q)$(LD) $(EFI_LDFLAGS) $(EFI_LIB)/crt0-efi-x86_64.o $(EFI_OBJS) -L$(EFI_LIB) -lefi -lgnuefi -o $@

$(BUILD)/efi/BOOTX64.EFI: $(BUILD)/efi/loader.so
	$(call say,EFI,$@)
	$(Q)objcopy $(EFI_SECTIONS) --target efi-app-x86_64 --subsystem=10 $< $@

# A command line baked into the images' goro.cmdline; empty: no file.
EFI_CMDLINE := $(CMDLINE)
$(BUILD)/efi/goro.cmdline: FORCE
	@mkdir -p $(dir $@)
	$(Q)printf '%s\n' '$(EFI_CMDLINE)' > $@.tmp
	$(Q)cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp

$(BUILD)/goro-efi.img: $(BUILD)/efi/BOOTX64.EFI $(BUILD)/goro.elf $(BUILD)/efi/goro.cmdline \
                       tools/build/mkesp.sh
	$(call say,ESP,$@)
	$(Q)sh tools/build/mkesp.sh $@.tmp $(EFI_IMG_MB) $(BUILD)/efi/BOOTX64.EFI $(BUILD)/goro.elf \
	    $(BUILD)/efi/goro.cmdline
	$(Q)mv $@.tmp $@

# The USB image is for real machines: without APP= it boots the shell
# (shell/shell.c), so that one stick runs every app. Its goro.cmdline and
# its GRUB menu carry this line; QEMU's fw_cfg command line still comes
# after it (the last app= wins).
USB_CMDLINE := $(or $(strip $(CMDLINE)),app=shell)
$(BUILD)/usb-cmdline/goro.cmdline: FORCE
	@mkdir -p $(dir $@)
	$(Q)printf '%s\n' '$(USB_CMDLINE)' > $@.tmp
	$(Q)cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp

$(BUILD)/goro-usb.img: $(BUILD)/goro.iso $(BUILD)/efi/BOOTX64.EFI $(BUILD)/goro.elf \
                       $(BUILD)/usb-cmdline/goro.cmdline tools/build/mkusb.sh tools/build/mkesp.sh
	$(call say,USB,$@)
	$(Q)sh tools/build/mkusb.sh $@ $(BUILD)/goro.iso $(BUILD)/efi/BOOTX64.EFI $(BUILD)/goro.elf \
	    $(BUILD)/usb-cmdline/goro.cmdline $(BUILD)/usb

.PHONY: FORCE
FORCE:

# ---- benchmarks ---------------------------------------------------------------
#
# bench: Go 1.19's runtime, sync and time benchmarks, goro's ports
#   (app=gobench) beside Go's own test binaries run unmodified in a Linux
#   guest under the same TCG and natively, on 1 and 2 vCPUs, with insn/op
#   from the insncount plugin (tools/bench/gobench.py); then goro's own suites
#   (app=bench, bench_chan, bench_mem, bench_time) beside the Go and
#   pthread peers of tests/peers; then goro's scheduling latency
#   (app=schedlat, metrics=1) beside Go's /sched/latencies:seconds on the
#   same workloads (tools/bench/schedlat.py). One report on stdout, the Go-format files
#   $(BUILD)/bench/gobench-*.txt, $(BUILD)/bench/results.json, plots in
#   $(BUILD)/bench/plots/ (docs/performance.md). BENCH_QUICK=1: a fifth of
#   the iterations and 3 counts. BENCH_ARGS passes options (tools/bench/bench.py
#   --help; --section schedlat runs one section); --from-serial LOG reads a
#   real machine's capture.
# Debian's python3-matplotlib belongs to Debian's python3, which need not be
# the first python3 on PATH.
BENCH_PYTHON ?= $(if $(wildcard /usr/bin/python3),/usr/bin/python3,$(PYTHON))
BENCH_ARGS ?=

# bench-boot's own sub-make links goro.elf too: it runs after the image is
# built, never beside it (two links of one file clobber each other).
bench: deps-for-bench
	@$(MAKE) --no-print-directory $(BUILD_JOBS) $(BUILD)/goro.elf $(INSNCOUNT)
	@$(MAKE) --no-print-directory bench-boot
	$(BENCH_PYTHON) tools/bench/bench.py --build $(BUILD) $(BENCH_ARGS)

# figures: every measured figure the README and docs/ quote, rewritten
#   between their markers from the archived runs in docs/data/
#   (tools/bench/figures.py). figures-archive first archives BUILD/bench's
#   newest make bench, make bench-boot and make bench-net runs there;
#   bench-readme is its older name.
.PHONY: figures figures-archive bench-readme
figures:
	$(PYTHON) tools/bench/figures.py
figures-archive bench-readme:
	$(PYTHON) tools/bench/figures.py --archive --build $(BUILD)

# bench-net: goro's httpd and kvd beside Go's net/http, a Go memcached-protocol
#   server and memcached 1.6 in Debian's Linux, each in its own guest at 1, 2
#   and 4 vCPUs over a tap device in a namespace of its own (root; --net user
#   otherwise): wrk and memcaslap closed loop, tools/net/loadgen's open-loop
#   latency against offered load, the L2 reflector's rate as the floor
#   (tools/net/netbench.py; docs/performance.md, "Network servers"). Results
#   in $(BUILD)/bench/net/, the plot in docs/img/net-latency.png.
#   NET_BENCH_ARGS passes options (--quick, --cpus 2, --servers, --net user).
NET_BENCH_ARGS ?=
.PHONY: bench-net
bench-net: deps-for-bench
	@$(MAKE) --no-print-directory $(BUILD_JOBS) $(BUILD)/goro.elf $(LOADGEN) $(L2SEND)
	$(BENCH_PYTHON) tools/net/netbench.py --build $(BUILD) --plot docs/img/net-latency.png $(NET_BENCH_ARGS)

# bench-boot: the boot timeline at 1, 2, 8, 32 and 64 vCPUs under TCG (median
#   of 5 boots each), beside a Debian Linux guest booted by the same QEMU to
#   its /init, and the published figures of OSv and Unikraft
#   (tools/bench/boot_bench.py; docs/boot.md). BOOT_BENCH_ARGS passes options.
BOOT_BENCH_ARGS ?=
.PHONY: bench-boot
bench-boot: deps-for-bench
	@$(MAKE) --no-print-directory $(BUILD_JOBS) $(BUILD)/goro.elf
	$(PYTHON) tools/bench/boot_bench.py --build $(BUILD) $(BOOT_BENCH_ARGS)
