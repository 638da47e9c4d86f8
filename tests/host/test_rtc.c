// SPDX-License-Identifier: MIT
// The CMOS clock's registers as a Unix time (arch/rtc_time.c): BCD and
// binary, the 12- and 24-hour clocks, the century register or 20xx, and
// every field out of range refused; the date arithmetic against the host
// libc's timegm over 400 years and at known instants.
#define _GNU_SOURCE
#include "check.h"
#include "arch/rtc_time.h"

#include <stddef.h>
#include <stdlib.h>
#include <time.h>

static uint8_t bcd(unsigned v)
{
    return (uint8_t)((v / 10) << 4 | v % 10);
}

static uint8_t bcd_to_plain(uint8_t v)
{
    return (uint8_t)((v >> 4) * 10 + (v & 0x0f));
}

// 2026-11-29 06:31:07 UTC in BCD, 24-hour, century register 0x20.
static struct rtc_regs bcd_regs(void)
{
    return (struct rtc_regs){ .sec = 0x07, .min = 0x31, .hour = 0x06, .day = 0x29, .month = 0x11, .year = 0x26,
                              .century = 0x20, .has_century = true, .status_b = RTC_B_24H };
}

static int64_t host_unix(int y, int mo, int d, int h, int mi, int s)
{
    struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h, .tm_min = mi, .tm_sec = s };
    return (int64_t)timegm(&tm);
}

static void known_instants(void)
{
    CHECK(rtc_days_from_civil(1970, 1, 1) == 0);
    CHECK(rtc_days_from_civil(1969, 12, 31) == -1);
    CHECK(rtc_days_from_civil(2000, 1, 1) * 86400 == 946684800);
    CHECK(rtc_days_from_civil(2000, 3, 1) - rtc_days_from_civil(2000, 2, 28) == 2);    // 2000 is a leap year
    CHECK(rtc_days_from_civil(2100, 3, 1) - rtc_days_from_civil(2100, 2, 28) == 1);    // 2100 is not
    CHECK(rtc_days_from_civil(2038, 1, 19) * 86400 + 3 * 3600 + 14 * 60 + 8 == 1ll << 31);
    struct rtc_regs r = bcd_regs();
    int64_t t = 0;
    CHECK(rtc_to_unix(&r, &t));
    CHECKF(t == 1795933867, "2026-11-29 06:31:07 is %lld", (long long)t);
}

// Every day of 1900..2299 at a time of day drawn from a fixed seed, as the
// registers would hold it in BCD and in binary, against timegm.
static void every_day_against_libc(void)
{
    srand(1);
    for (int y = 1900; y < 2300; y++) {
        for (int mo = 1; mo <= 12; mo++) {
            for (int d = 1; d <= 31; d++) {
                int h = rand() % 24, mi = rand() % 60, s = rand() % 60;
                int64_t want = host_unix(y, mo, d, h, mi, s);
                struct tm back;
                time_t tt = (time_t)want;
                gmtime_r(&tt, &back);
                bool exists = back.tm_mday == d;    // timegm normalizes February 30 into March
                struct rtc_regs r = { bcd(s), bcd(mi), bcd(h), bcd(d), bcd(mo), bcd(y % 100), bcd(y / 100), true,
                                      RTC_B_24H };
                int64_t t = 0;
                bool ok = rtc_to_unix(&r, &t);
                CHECKF(ok == exists && (!ok || t == want), "BCD %04d-%02d-%02d %02d:%02d:%02d: %d %lld, want %d %lld",
                       y, mo, d, h, mi, s, ok, (long long)t, exists, (long long)want);
                r = (struct rtc_regs){ (uint8_t)s, (uint8_t)mi, (uint8_t)h, (uint8_t)d, (uint8_t)mo, (uint8_t)(y % 100),
                                       (uint8_t)(y / 100), true, RTC_B_24H | RTC_B_BINARY };
                ok = rtc_to_unix(&r, &t);
                CHECKF(ok == exists && (!ok || t == want), "binary %04d-%02d-%02d: %d", y, mo, d, ok);
            }
        }
    }
}

// The 12-hour clock: 12 AM is hour 0, 12 PM hour 12, 1 PM hour 13, in
// BCD and binary; hour 0 or 13 does not exist there.
static void twelve_hour(void)
{
    static const struct { uint8_t reg; int hour; } cases[] = {
        { 0x12, 0 }, { 0x01, 1 }, { 0x11, 11 }, { 0x80 | 0x12, 12 }, { 0x80 | 0x01, 13 }, { 0x80 | 0x11, 23 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct rtc_regs r = bcd_regs();
        r.status_b = 0;
        r.hour = cases[i].reg;
        int64_t t = 0;
        CHECKF(rtc_to_unix(&r, &t) && t == host_unix(2026, 11, 29, cases[i].hour, 31, 7), "BCD hour %#x: %lld",
               cases[i].reg, (long long)t);
        r.status_b = RTC_B_BINARY;
        r.hour = (uint8_t)((cases[i].reg & 0x80) | bcd_to_plain(cases[i].reg & 0x7f));
        r.sec = 7, r.min = 31, r.day = 29, r.month = 11, r.year = 26, r.century = 20;
        CHECKF(rtc_to_unix(&r, &t) && t == host_unix(2026, 11, 29, cases[i].hour, 31, 7), "binary hour %#x",
               r.hour);
    }
    struct rtc_regs r = bcd_regs();
    int64_t t;
    r.status_b = 0;
    r.hour = 0x00;
    CHECK(!rtc_to_unix(&r, &t));
    r.hour = 0x13;
    CHECK(!rtc_to_unix(&r, &t));
}

static void century(void)
{
    struct rtc_regs r = bcd_regs();
    int64_t t = 0;
    r.has_century = false;
    r.century = 0x19;           // not read: the year is 2026
    CHECK(rtc_to_unix(&r, &t) && t == host_unix(2026, 11, 29, 6, 31, 7));
    r.has_century = true;
    CHECK(rtc_to_unix(&r, &t) && t == host_unix(1926, 11, 29, 6, 31, 7));
    r.century = 0x21;
    CHECK(rtc_to_unix(&r, &t) && t == host_unix(2126, 11, 29, 6, 31, 7));
    r.century = 0x18;
    CHECK(!rtc_to_unix(&r, &t));
    r.century = 0x00;
    CHECK(!rtc_to_unix(&r, &t));
}

// A clock without a battery, or none at all, reads 0xff or BCD nonsense.
static void out_of_range(void)
{
    static const struct { size_t off; uint8_t v; } cases[] = {
        { offsetof(struct rtc_regs, sec), 0x60 }, { offsetof(struct rtc_regs, sec), 0x0a },
        { offsetof(struct rtc_regs, min), 0x60 }, { offsetof(struct rtc_regs, hour), 0x24 },
        { offsetof(struct rtc_regs, day), 0x00 }, { offsetof(struct rtc_regs, day), 0x31 },   // November 31
        { offsetof(struct rtc_regs, month), 0x00 }, { offsetof(struct rtc_regs, month), 0x13 },
        { offsetof(struct rtc_regs, year), 0xa0 }, { offsetof(struct rtc_regs, year), 0xff },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct rtc_regs r = bcd_regs();
        ((uint8_t *)&r)[cases[i].off] = cases[i].v;
        int64_t t;
        CHECKF(!rtc_to_unix(&r, &t), "field at %zu = %#x taken", cases[i].off, cases[i].v);
    }
    struct rtc_regs r = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, true, 0xff };
    int64_t t;
    CHECK(!rtc_to_unix(&r, &t));
    r.status_b = RTC_B_24H | RTC_B_BINARY;
    r.sec = 60, r.min = 0, r.hour = 0, r.day = 1, r.month = 1, r.year = 0, r.century = 20;
    CHECK(!rtc_to_unix(&r, &t));
    r.sec = 59, r.year = 100;
    CHECK(!rtc_to_unix(&r, &t));
}

int main(void)
{
    RUN(known_instants);
    RUN(every_day_against_libc);
    RUN(twelve_hour);
    RUN(century);
    RUN(out_of_range);
    return check_failed_total != 0;
}
