// SPDX-License-Identifier: MIT
// The CMOS real-time clock (MC146818 and its descendants), read once at
// boot for the time of day (arch.h: arch_rtc_read). Its registers change
// once a second, in an update that status register A announces (UIP)
// about 244 us before it starts and that lasts up to 2 ms; a reading made
// across one can mix two seconds (59 s of the old minute with the new
// minute), so each reading waits for UIP to clear and is repeated until
// two agree.
#include "arch/arch.h"
#include "arch/rtc_time.h"
#include "arch/x86.h"

#define CMOS_INDEX 0x70         // bit 7 would mask NMIs: left clear
#define CMOS_DATA 0x71
#define REG_SEC 0x00
#define REG_MIN 0x02
#define REG_HOUR 0x04
#define REG_DAY 0x07
#define REG_MONTH 0x08
#define REG_YEAR 0x09
#define REG_A 0x0a
#define REG_B 0x0b
#define REG_FIRST_FREE 0x0e     // the first register past the clock's own
#define REG_A_UIP 0x80

#define UIP_WAIT_NS 10000000ull // an update takes at most 2 ms
#define TRIES 5

static uint8_t cmos(uint8_t reg)
{
    outb(CMOS_INDEX, reg);
    return inb(CMOS_DATA);
}

static bool wait_no_update(void)
{
    uint64_t until = arch_nanotime() + UIP_WAIT_NS;
    while (cmos(REG_A) & REG_A_UIP)
        if (arch_nanotime() > until)
            return false;
    return true;
}

static bool read_regs(struct rtc_regs *r, uint8_t century_reg)
{
    if (!wait_no_update())
        return false;
    r->sec = cmos(REG_SEC);
    r->min = cmos(REG_MIN);
    r->hour = cmos(REG_HOUR);
    r->day = cmos(REG_DAY);
    r->month = cmos(REG_MONTH);
    r->year = cmos(REG_YEAR);
    r->has_century = century_reg >= REG_FIRST_FREE && century_reg < 0x80;
    r->century = r->has_century ? cmos(century_reg) : 0;
    r->status_b = cmos(REG_B);
    return true;
}

static bool same(const struct rtc_regs *a, const struct rtc_regs *b)
{
    return a->sec == b->sec && a->min == b->min && a->hour == b->hour && a->day == b->day &&
           a->month == b->month && a->year == b->year && a->century == b->century &&
           a->status_b == b->status_b;
}

bool arch_rtc_read(uint8_t century_reg, int64_t *unix_s)
{
    struct rtc_regs a, b;
    if (!read_regs(&a, century_reg))
        return false;
    for (int i = 0; i < TRIES; i++) {
        if (!read_regs(&b, century_reg))
            return false;
        if (same(&a, &b))
            return rtc_to_unix(&b, unix_s);
        a = b;
    }
    return false;
}
