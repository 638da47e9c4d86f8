// SPDX-License-Identifier: MIT
// The CMOS clock's registers as a Unix time: pure, so that the host tests
// check it (arch/rtc.c reads the registers).
#ifndef GORO_RTC_TIME_H
#define GORO_RTC_TIME_H

#include <stdbool.h>
#include <stdint.h>

// Status register B's bits that say how the others are written.
#define RTC_B_24H 0x02          // hours 0-23 (else 1-12, bit 7 set after noon)
#define RTC_B_BINARY 0x04       // binary (else BCD)

// The registers as read, each in the form status_b gives it.
struct rtc_regs {
    uint8_t sec, min, hour, day, month, year;
    uint8_t century;            // the FADT's century register; only with has_century
    bool has_century;           // else the year is 20xx
    uint8_t status_b;
};

// The days from 1970-01-01 to year-month-day of the proleptic Gregorian
// calendar (negative before it). month 1..12, day 1..31.
int64_t rtc_days_from_civil(int64_t year, unsigned month, unsigned day);

// The Unix time the registers hold (the clock keeps UTC). False when a
// field is out of its range (a BCD digit over 9, February 30, hour 24, a
// 12-hour hour of 0, a century outside 19..99): no time is known then.
bool rtc_to_unix(const struct rtc_regs *r, int64_t *unix_s);

#endif
