// SPDX-License-Identifier: MIT
// QEMU's firmware configuration device (fw_cfg), read through its legacy
// I/O ports. The test runner passes a command line to an ISO boot with
// `-fw_cfg name=opt/goro/cmdline,string=...`, since GRUB's grub.cfg is fixed
// inside the image.
//
// Boot-time only: the device has one selector shared by every core, so
// callers run on the BSP before the APs start.
#ifndef GORO_FW_CFG_H
#define GORO_FW_CFG_H

#include <stdbool.h>
#include <stddef.h>

// Copies the fw_cfg file `name` (e.g. "opt/goro/cmdline") into buf, at most
// cap bytes; a longer file is cut at cap. *len gets the bytes copied. The
// data is raw: a string= file carries no NUL, so a caller wanting a C string
// passes cap one short of its buffer and terminates at buf[*len].
// Returns false, *len = 0, when there is no fw_cfg device (not QEMU) or no
// such file.
bool fw_cfg_read_file(const char *name, void *buf, size_t cap, size_t *len);
// The cores QEMU started the machine with (-smp's count); 0 without fw_cfg.
uint32_t fw_cfg_cpu_count(void);

#endif
