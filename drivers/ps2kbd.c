// SPDX-License-Identifier: MIT
// The 8042 keyboard controller (drivers/ps2kbd.h). Every wait on the
// controller is bounded: on a machine whose firmware emulates it badly, or
// not at all, the keyboard is reported missing instead of hanging boot.
#include "drivers/ps2kbd.h"
#include "arch/x86.h"
#include "lib/printf.h"

#define PS2_DATA 0x60
#define PS2_STATUS 0x64             // read
#define PS2_CMD 0x64                // write
#define ST_OUT_FULL 0x01            // a byte waits in PS2_DATA
#define ST_IN_FULL 0x02             // the controller has not taken our last byte yet
#define ST_AUX 0x20                 // the waiting byte is from the mouse port
#define CMD_READ_CONFIG 0x20
#define CMD_WRITE_CONFIG 0x60
#define CMD_AUX_OFF 0xA7
#define CMD_KBD_OFF 0xAD
#define CMD_KBD_ON 0xAE
#define CFG_KBD_IRQ 0x01
#define CFG_AUX_IRQ 0x02
#define CFG_KBD_CLOCK_OFF 0x10
#define CFG_TRANSLATE 0x40          // set 2 -> set 1
#define KBD_ENABLE_SCAN 0xF4
#define KBD_ACK 0xFA
#define SPINS 200000                // port reads: about 0.2 s on real hardware

static bool wait_in_empty(void)
{
    for (int i = 0; i < SPINS; i++)
        if (!(inb(PS2_STATUS) & ST_IN_FULL))
            return true;
    return false;
}

static int wait_byte(void)
{
    for (int i = 0; i < SPINS; i++)
        if (inb(PS2_STATUS) & ST_OUT_FULL)
            return inb(PS2_DATA);
    return -1;
}

static bool command(uint8_t cmd)
{
    if (!wait_in_empty())
        return false;
    outb(PS2_CMD, cmd);
    return true;
}

static bool write_data(uint8_t v)
{
    if (!wait_in_empty())
        return false;
    outb(PS2_DATA, v);
    return true;
}

static void drain(void)
{
    for (int i = 0; i < 64 && (inb(PS2_STATUS) & ST_OUT_FULL); i++)
        (void)inb(PS2_DATA);
}

bool ps2kbd_init(void)
{
    if (inb(PS2_STATUS) == 0xFF) {  // nothing decodes the port
        kprintf("ps2kbd: no 8042 controller (status port reads 0xff): no keyboard input\n");
        return false;
    }
    // Both ports off while the configuration changes, and what the
    // firmware left unread is dropped.
    if (!command(CMD_KBD_OFF) || !command(CMD_AUX_OFF))
        goto stuck;
    drain();
    if (!command(CMD_READ_CONFIG))
        goto stuck;
    int cfg = wait_byte();
    if (cfg < 0)
        goto stuck;
    // Interrupts off until scanning is on: the acknowledgement is polled.
    cfg = (cfg & ~(CFG_KBD_IRQ | CFG_AUX_IRQ | CFG_KBD_CLOCK_OFF)) | CFG_TRANSLATE;
    if (!command(CMD_WRITE_CONFIG) || !write_data((uint8_t)cfg) || !command(CMD_KBD_ON))
        goto stuck;
    // Firmware may leave scanning off once it has handed over. A keyboard
    // that does not acknowledge still gets its interrupt turned on: USB
    // legacy emulations differ in what they answer.
    if (!write_data(KBD_ENABLE_SCAN) || wait_byte() != KBD_ACK)
        kprintf("ps2kbd: the keyboard did not acknowledge 'enable scanning'; going on\n");
    drain();
    if (!command(CMD_WRITE_CONFIG) || !write_data((uint8_t)(cfg | CFG_KBD_IRQ)))
        goto stuck;
    return true;
stuck:
    kprintf("ps2kbd: the 8042 controller does not answer: no keyboard input\n");
    return false;
}

int ps2kbd_getc(void)
{
    for (int i = 0; i < 64; i++) {
        uint8_t st = inb(PS2_STATUS);
        if (!(st & ST_OUT_FULL))
            return -1;
        uint8_t b = inb(PS2_DATA);
        if (!(st & ST_AUX))
            return b;
    }
    return -1;
}
