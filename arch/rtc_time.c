// SPDX-License-Identifier: MIT
#include "arch/rtc_time.h"

// Days before the month in a March-based year (March is 0): the leap day
// falls at the end, so no table needs to know the year.
static unsigned days_before_march_month(unsigned m)
{
    return (153 * m + 2) / 5;
}

int64_t rtc_days_from_civil(int64_t year, unsigned month, unsigned day)
{
    // Counted in 400-year eras of 146097 days each starting on March 1,
    // so that the leap rule is the era's arithmetic.
    int64_t y = year - (month <= 2);
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;                                    // 0..399
    unsigned mar = month > 2 ? month - 3 : month + 9;               // 0..11 from March
    int64_t doy = days_before_march_month(mar) + day - 1;           // 0..365
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            // 0..146096
    return era * 146097 + doe - 719468;                             // 719468: 0000-03-01 to 1970-01-01
}

static bool leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned month_days(int64_t y, unsigned m)
{
    static const uint8_t days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    return days[m - 1] + (m == 2 && leap(y));
}

// A register's value: binary as it is, or two BCD digits (false: a digit
// over 9).
static bool field(uint8_t v, bool binary, unsigned *out)
{
    if (binary) {
        *out = v;
        return true;
    }
    if ((v & 0x0f) > 9 || (v >> 4) > 9)
        return false;
    *out = (v >> 4) * 10u + (v & 0x0f);
    return true;
}

bool rtc_to_unix(const struct rtc_regs *r, int64_t *unix_s)
{
    bool bin = r->status_b & RTC_B_BINARY;
    unsigned sec, min, hour, day, month, year, century = 20;
    bool pm = false;
    uint8_t h = r->hour;
    if (!(r->status_b & RTC_B_24H)) {
        pm = h & 0x80;                  // the 12-hour clock's PM bit, in either form
        h &= 0x7f;
    }
    if (!field(r->sec, bin, &sec) || !field(r->min, bin, &min) || !field(h, bin, &hour) ||
        !field(r->day, bin, &day) || !field(r->month, bin, &month) || !field(r->year, bin, &year))
        return false;
    if (r->has_century && (!field(r->century, bin, &century) || century < 19 || century > 99))
        return false;
    if (!(r->status_b & RTC_B_24H)) {
        if (hour < 1 || hour > 12)
            return false;
        hour = hour % 12 + (pm ? 12 : 0);   // 12 AM is 0, 12 PM is 12
    }
    int64_t y = century * 100 + year;
    if (sec > 59 || min > 59 || hour > 23 || year > 99 || month < 1 || month > 12 || day < 1 ||
        day > month_days(y, month))
        return false;
    *unix_s = rtc_days_from_civil(y, month, day) * 86400 + hour * 3600 + min * 60 + sec;
    return true;
}
