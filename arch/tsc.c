// SPDX-License-Identifier: MIT
// The TSC's frequency, and time from it.
//
// The frequency, from the first source that answers:
//  1. the hypervisor's timing leaf, CPUID 0x40000010 (VMware's, which
//     QEMU/KVM offer with an invariant TSC): kHz, within 0.5 kHz;
//  2. CPUID 0x15: crystal times ratio, exact as the CPU states it; when
//     0x15 leaves the crystal out, 0x16's base frequency stands in for it
//     (as Linux does), within 0.5 MHz;
//  3. a short window against a reference clock (arch/refclock.c): at least
//     1 ms, longer until the error bound is 500 ppm or less, at most 20 ms;
//     the bound is printed. Under TCG (-cpu max: basic leaves up to 0xD,
//     hypervisor leaves up to 0x40000001) this is the path taken.
//     The window is a first reading and a last: the boot goes on in
//     between (ACPI to just before the APs start, kernel/main.c), so it
//     costs only what is left of its millisecond by then.
//
// Refinement. A frequency from 0x16 or from a window is refined while the
// machine runs: sysmon calls arch_clock_refine at each look (core 0, whose
// TSC took the readings), and once ten times the last window has passed
// since the window's first reading (10 ms, 100 ms, 1 s, ...) it reads the
// reference again and measures over the whole stretch, with a tenth of the
// bound each time. A counter that wrapped unseen in between is accounted
// for by the TSC itself: the current estimate predicts the elapsed ticks
// far better than half a wrap.
//
// Steps. Each new stretch is also checked on its own against the current
// rate. A TSC and a reference that are both sound agree there within the
// two bounds plus WANDER_PPB (real crystals drift a few ppm apart; under
// TCG the TSC is the host's TSC and the reference the host's
// CLOCK_MONOTONIC, which the host's clock discipline slews by about 10 ppm).
// A stretch beyond that is a step, not a rate: the measurement starts again
// from there and the current rate stays. The boot window checks its two
// halves against each other the same way.
//
// Corrections. A rate can also go wrong and stay wrong: a TSC that is not
// invariant changes rate with the core's frequency, and under TCG with
// more than one vCPU QEMU's TSC gains on its clocks while vCPUs read it at
// once (docs/boot.md, "The TSC under TCG": 0.1-0.7% in ktest's busy
// phases). Then every stretch disagrees with the rate, not one, and a rate
// judged only by its agreement was never replaced. So two stretches in a
// row that disagree with the rate but agree with each other are the
// measurement, and the rate is what is off: their rate takes over with
// their bound, however loose, and refinement goes on from there.
//
// Time. nanotime is piecewise linear in the TSC: a segment is
// ns(t) = base_ns + (t - base_tsc) * ns_per_cycle, and a refinement starts
// a new segment at the moment it takes over, with base_ns what the old
// segment gives there: no jump, never back. arch_nanotime() reads the TSC
// inside the read of the segment, so it always uses the segment that was
// current at that TSC; arch_tsc_to_nanotime(t), for a TSC read earlier,
// uses the previous segment when t is older than the current one (older
// than both, it extrapolates the previous one back: off by the two rates'
// difference over the gap, ppm of it, and a rounding). Durations
// (arch_cycles_to_ns) use the current factor alone. Factors are 32.32 fixed
// point: a multiply and a shift, no 128-bit division on any hot path (it
// would need libgcc).
//
// The conversion is a seqlock: one writer at a time (refine_lock: the boot
// core at boot, then core 0's sysmon or a test), any number of readers.
// seq is odd while the writer is inside; a reader that saw it odd, or saw
// it change, reads again.
#include "arch/arch_private.h"
#include "arch/x86.h"
#include "lib/panic.h"
#include "lib/printf.h"

#define WINDOW_MIN_NS 1000000ull        // the boot window: at least 1 ms,
#define WINDOW_TARGET_PPB 500000ull     // then until the bound is 500 ppm,
#define WINDOW_MAX_NS 20000000ull       // giving up on the bound at 20 ms
#define WINDOW_TRIES 3                  // windows, when halves disagree (a step)
#define WANDER_PPB 50000ull             // sound clocks drift apart by less than this
#define REFINE_FIRST_NS 10000000ull     // after a step, measure again from 10 ms
#define REFINE_MIN_GAP_NS 1000000ull    // readings at least 1 ms apart
#define SAMPLE_MAX_HALF 20000           // cycles: a wider bracket is a descheduled vCPU
#define PPB 1000000000ull

struct segment {
    uint64_t base_tsc, base_ns;         // ns(base_tsc) == base_ns
    uint64_t mult;                      // 2^32 * 1e9 / hz: ns per cycle, 32.32
};

static struct {
    uint32_t seq;                       // odd while the writer is inside
    struct segment cur, prev;           // prev: the one before cur (for older TSC values)
    uint64_t cycles_per_ns_32;          // 2^32 * hz / 1e9
    uint64_t hz;
} conv;

// The calibration, for refinement and for arch_clock_info. Written under
// refine_lock; next_refine is also read without it (relaxed) at each look.
static struct spinlock refine_lock = SPINLOCK_INIT("tsc refine", LOCK_RANK_CLOCK);
static struct refclock ref;
static bool refinable;                  // measured against a clock readable while running
static struct refsample anchor;         // the current measurement's first reading (core 0's TSC)
static struct refsample last;           // its latest reading
static uint64_t anchor_ticks;           // reference ticks from anchor to last, wraps included
static uint64_t window_cycles;          // the current estimate's window
static uint64_t bound_ppb;              // and its error bound
static uint32_t refinements, steps, corrections, skews;
// The stretch before the anchor, when it disagreed with the rate (it ends
// where the anchor starts): the first of a possible two in a row.
static struct refsample disagreed_from;
static uint64_t disagreed_ticks;        // 0: the stretch before agreed, or there was none
static int64_t skew_request;            // ppb: ktest's, applied at core 0's next refinement
static uint64_t next_refine;            // TSC; refine when a look comes after it
static const char *source;
static uint64_t boot_hz, boot_bound_ppb, boot_window_cycles;

// ---- the conversion ----------------------------------------------------------

static uint64_t mul_shift32(uint64_t a, uint64_t b)
{
    return (uint64_t)(((__uint128_t)a * b) >> 32);
}

// (a * b) / c for c > 0 and a quotient that fits 64 bits, with the CPU's
// 128-by-64 divide.
static uint64_t mul_div(uint64_t a, uint64_t b, uint64_t c)
{
    __uint128_t p = (__uint128_t)a * b;
    uint64_t q, r;
    __asm__("divq %4" : "=a"(q), "=d"(r) : "a"((uint64_t)p), "d"((uint64_t)(p >> 64)), "rm"(c) : "cc");
    return q;
}

static uint64_t segment_ns(const struct segment *s, uint64_t tsc)
{
    if (tsc >= s->base_tsc)
        return s->base_ns + mul_shift32(tsc - s->base_tsc, s->mult);
    return s->base_ns - mul_shift32(s->base_tsc - tsc, s->mult);
}

static void segment_load(struct segment *d, const struct segment *s)
{
    // relaxed: inside the seqlock's read; the reader's seq loads and
    // fence order them against conv_set's stores.
    d->base_tsc = __atomic_load_n(&s->base_tsc, __ATOMIC_RELAXED);  // relaxed: seqlock read
    d->base_ns = __atomic_load_n(&s->base_ns, __ATOMIC_RELAXED);    // relaxed: seqlock read
    d->mult = __atomic_load_n(&s->mult, __ATOMIC_RELAXED);          // relaxed: seqlock read
}

static void segment_store(struct segment *d, const struct segment *s)
{
    // relaxed: inside the seqlock's write, between conv_set's odd seq (and
    // its release fence) and its even seq (release).
    __atomic_store_n(&d->base_tsc, s->base_tsc, __ATOMIC_RELAXED);  // relaxed: seqlock write
    __atomic_store_n(&d->base_ns, s->base_ns, __ATOMIC_RELAXED);    // relaxed: seqlock write
    __atomic_store_n(&d->mult, s->mult, __ATOMIC_RELAXED);          // relaxed: seqlock write
}

uint64_t arch_nanotime(void)
{
    for (;;) {
        uint32_t s = __atomic_load_n(&conv.seq, __ATOMIC_ACQUIRE);    // pairs with conv_set's last release
        uint64_t tsc = rdtsc_ordered();                             // after the load above
        struct segment cur;
        segment_load(&cur, &conv.cur);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);                    // the loads above before the re-check
        if (!(s & 1) && __atomic_load_n(&conv.seq, __ATOMIC_RELAXED) == s)  // relaxed: ordered by the fence above
            return segment_ns(&cur, tsc);
        cpu_relax();
    }
}

uint64_t arch_tsc_to_nanotime(uint64_t tsc)
{
    for (;;) {
        uint32_t s = __atomic_load_n(&conv.seq, __ATOMIC_ACQUIRE);    // pairs with conv_set's last release
        struct segment cur, prev;
        segment_load(&cur, &conv.cur);
        segment_load(&prev, &conv.prev);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);                    // the loads above before the re-check
        if (!(s & 1) && __atomic_load_n(&conv.seq, __ATOMIC_RELAXED) == s)  // relaxed: ordered by the fence above
            return segment_ns(tsc >= cur.base_tsc ? &cur : &prev, tsc);
        cpu_relax();
    }
}

// refine_lock held (or the boot core alone). The new rate takes over at
// this moment; nanotime continues from where the old rate had it.
static void conv_set(uint64_t hz)
{
    uint32_t seq = conv.seq;            // only writers change it, one at a time
    __atomic_store_n(&conv.seq, seq + 1, __ATOMIC_RELAXED);             // odd: readers retry
    // seq odd visible to every core before the TSC is read (and before any
    // field changes): a release fence would let the store wait in the store
    // buffer while rdtsc runs (LFENCE does not drain it), and a reader that
    // then read the TSC past `now` and seq still even would convert it with
    // the old segment, a little off the new one's value there.
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    uint64_t now = rdtsc_ordered();                                     // after seq is odd
    struct segment next = { now, segment_ns(&conv.cur, now), (PPB << 32) / hz };
    if (!conv.hz)
        next.base_tsc = next.base_ns = 0;   // the first rate: nanotime counts from TSC 0, as the cycle count does
    segment_store(&conv.prev, conv.hz ? &conv.cur : &next);
    segment_store(&conv.cur, &next);
    // relaxed: read alone (a rate, not a segment); either value is a good one
    __atomic_store_n(&conv.cycles_per_ns_32, ((hz / PPB) << 32) + ((hz % PPB) << 32) / PPB,
                     __ATOMIC_RELAXED);
    __atomic_store_n(&conv.hz, hz, __ATOMIC_RELAXED);                  // relaxed: as above
    __atomic_store_n(&conv.seq, seq + 2, __ATOMIC_RELEASE);             // even: pairs with the readers' acquire
}

uint64_t arch_tsc_hz(void)
{
    return __atomic_load_n(&conv.hz, __ATOMIC_RELAXED);    // relaxed: a rate alone; old or new are both sound
}

// Both saturate: a duration too long for 64 bits is "never", not a
// wrapped-around short one.
uint64_t arch_ns_to_cycles(uint64_t ns)
{
    __uint128_t c = ((__uint128_t)ns * __atomic_load_n(&conv.cycles_per_ns_32, __ATOMIC_RELAXED)) >> 32;  // relaxed: as arch_tsc_hz
    return c > UINT64_MAX ? UINT64_MAX : (uint64_t)c;
}

uint64_t arch_cycles_to_ns(uint64_t cycles)
{
    __uint128_t ns = ((__uint128_t)cycles * __atomic_load_n(&conv.cur.mult, __ATOMIC_RELAXED)) >> 32;  // relaxed: as arch_tsc_hz
    return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

void tsc_delay_us(uint64_t us)
{
    uint64_t end = rdtsc() + arch_ns_to_cycles(us * 1000);
    while (rdtsc() < end)
        cpu_relax();
}

// ---- the frequency from CPUID ------------------------------------------------

static uint64_t from_hypervisor_leaf(void)
{
    if (!arch_under_hypervisor() || cpuid(0x40000000, 0).eax < 0x40000010)
        return 0;
    return (uint64_t)cpuid(0x40000010, 0).eax * 1000;
}

// 0x15: TSC = crystal * ebx / eax. Without the crystal (ecx = 0), the
// base frequency of 0x16 (MHz) is the TSC's, as Linux takes it; *approx
// says so.
static uint64_t from_cpuid_15(bool *approx)
{
    uint32_t max = cpuid(0, 0).eax;
    if (max < 0x15)
        return 0;
    struct cpuid_regs r = cpuid(0x15, 0);
    if (!r.eax || !r.ebx)
        return 0;
    if (r.ecx) {
        *approx = false;
        return (uint64_t)r.ecx * r.ebx / r.eax;
    }
    if (max < 0x16 || !(cpuid(0x16, 0).eax & 0xFFFF))
        return 0;
    *approx = true;
    return (uint64_t)(cpuid(0x16, 0).eax & 0xFFFF) * 1000000;
}

// ---- the frequency from a window ---------------------------------------------

// Error bound of a measurement from a to b, in parts per billion: each
// end's bracket, and less than one tick of the reference in all.
static uint64_t bound_of(const struct refsample *a, const struct refsample *b, uint64_t ticks)
{
    return (a->half + b->half) * PPB / (b->tsc - a->tsc) + PPB / ticks;
}

// Whether rates a and b (Hz), within bounds ba and bb (ppb), can belong to
// sound clocks: apart by no more than the bounds and the wander.
static bool rates_agree(uint64_t a, uint64_t ba, uint64_t b, uint64_t bb)
{
    uint64_t diff = a > b ? a - b : b - a;
    return mul_div(diff, PPB, b) <= ba + bb + WANDER_PPB;
}

// The boot window: its first reading, a reading in the middle when the
// boot took one, and (tsc_calibrate_end) its last.
static struct refsample win_first, win_mid;
static bool win_open, win_has_mid;

// A window whose reference wraps within a second (the PIT: 55 ms) is not
// left open while the boot goes on: a long stall would hide a wrap.
static bool overlap_ok(void)
{
    return ref.mask / ref.hz >= 1;
}

static bool window_open_now(void)
{
    win_has_mid = false;
    // Its half-width stays in the bound to the end: the narrowest of several.
    return win_open = refclock_sample(&ref, 8, SAMPLE_MAX_HALF, &win_first);
}

// Whether the halves [a, m] and [m, e] of a window disagree: a step.
// Halves shorter than a quarter of the window are not compared (their
// bounds would say little).
static bool halves_disagree(const struct refsample *a, const struct refsample *m, const struct refsample *e)
{
    uint64_t t1 = refclock_ticks(&ref, a, m), t2 = refclock_ticks(&ref, m, e), all = t1 + t2;
    if (t1 < all / 4 || t2 < all / 4 || m->tsc <= a->tsc || e->tsc <= m->tsc)
        return false;
    return !rates_agree(mul_div(m->tsc - a->tsc, ref.hz, t1), bound_of(a, m, t1),
                        mul_div(e->tsc - m->tsc, ref.hz, t2), bound_of(m, e, t2));
}

// Closes the open window: readings until it spans WINDOW_MIN_NS and its
// bound is WINDOW_TARGET_PPB (or it spans WINDOW_MAX_NS). 0: the reference
// stopped answering; *stepped: its halves disagree.
static uint64_t window_close(bool *stepped)
{
    uint64_t min_ticks = ref.hz * WINDOW_MIN_NS / PPB, max_ticks = ref.hz * WINDOW_MAX_NS / PPB, ticks;
    struct refsample s;
    for (;;) {
        if (!refclock_sample(&ref, 3, SAMPLE_MAX_HALF, &s))
            return 0;
        ticks = refclock_ticks(&ref, &win_first, &s);
        if (!win_has_mid && ticks >= min_ticks / 2) {
            win_mid = s;
            win_has_mid = true;
        }
        if (ticks < min_ticks)
            continue;
        bound_ppb = bound_of(&win_first, &s, ticks);
        if (bound_ppb <= WINDOW_TARGET_PPB || ticks >= max_ticks)
            break;
    }
    *stepped = win_has_mid && halves_disagree(&win_first, &win_mid, &s);
    anchor = win_first;
    last = s;
    anchor_ticks = ticks;
    window_cycles = s.tsc - win_first.tsc;
    return mul_div(window_cycles, ref.hz, ticks);
}

// Boot core, as soon as ACPI has named the reference clocks: the rate from
// CPUID, or the window's first reading. Nothing converts cycles and time
// until tsc_calibrate_end.
void tsc_calibrate_begin(void)
{
    bool approx = false;
    uint64_t hz = from_hypervisor_leaf();
    source = "CPUID 0x40000010";
    if (hz) {
        bound_ppb = 500 * PPB / hz;
    } else if ((hz = from_cpuid_15(&approx))) {
        source = approx ? "CPUID 0x16" : "CPUID 0x15";
        bound_ppb = approx ? 500000 * PPB / hz : 0;
    }
    bool have_ref = refclock_pick(&ref);
    if (!hz && have_ref) {
        source = ref.name;
        if (overlap_ok())
            window_open_now();
    } else if (approx && have_ref && ref.refinable) {
        refinable = refclock_sample(&ref, 3, SAMPLE_MAX_HALF, &anchor);
        last = anchor;
    }
    if (hz)
        conv_set(hz);
}

// Boot core, while the window is open: a reading between its ends, so
// that a step inside it shows.
void tsc_calibrate_mark(void)
{
    if (win_open && !win_has_mid)
        win_has_mid = refclock_sample(&ref, 3, SAMPLE_MAX_HALF, &win_mid);
}

// Boot core: the window closed, measured again from scratch if its halves
// disagree; the rate in force from here on.
void tsc_calibrate_end(void)
{
    uint64_t hz = arch_tsc_hz();
    if (!hz && ref.hz) {
        for (int i = 0; i < WINDOW_TRIES; i++) {
            bool stepped = false;
            if ((!win_open && !window_open_now()) || !(hz = window_close(&stepped)))
                break;
            win_open = false;
            if (!stepped)
                break;
            steps++;
        }
        refinable = hz && ref.refinable;
    }
    if (!hz) {
        hz = 1000000000;        // no usable reference: say so, keep going
        source = "no reference clock answered; assuming 1 GHz";
    }
    if (!arch_tsc_hz())
        conv_set(hz);
    boot_hz = hz;
    boot_bound_ppb = bound_ppb;
    boot_window_cycles = window_cycles;
    if (refinable)
        next_refine = anchor.tsc + 10 * (window_cycles ? window_cycles : arch_ns_to_cycles(WINDOW_MIN_NS));
}

void tsc_report(void)
{
    uint64_t hz = arch_tsc_hz();
    bool invariant = cpuid(0x80000000, 0).eax >= 0x80000007 && (cpuid(0x80000007, 0).edx & (1u << 8));
    char window[48] = "";
    if (window_cycles)
        snprintf(window, sizeof window, ", %lu us window", arch_cycles_to_ns(window_cycles) / 1000);
    kprintf("tsc: %lu.%03lu MHz (%s%s, within %lu.%03lu ppm%s)%s%s\n", hz / 1000000, (hz / 1000) % 1000,
            source, window, bound_ppb / 1000, bound_ppb % 1000, steps ? "; a step seen, measured again" : "",
            refinable ? ", refined while running" : "", invariant ? ", invariant" : ", not marked invariant");
}

// ---- refinement --------------------------------------------------------------

// Reference ticks from last to s, wraps included: the current rate
// predicts the count to far better than half a wrap.
static uint64_t ticks_since_last(const struct refsample *s)
{
    uint64_t seen = refclock_ticks(&ref, &last, s);
    if (ref.mask == UINT64_MAX)
        return seen;
    uint64_t wrap = ref.mask + 1;
    uint64_t predicted = mul_div(s->tsc - last.tsc, ref.hz, arch_tsc_hz());
    if (predicted + wrap / 2 < seen)
        return seen;
    return seen + (predicted + wrap / 2 - seen) / wrap * wrap;
}

// refine_lock held, on core 0. Takes one more reading; returns whether the
// rate changed.
static bool refine_locked(bool force)
{
    struct refsample s;
    if (!refclock_sample(&ref, 3, SAMPLE_MAX_HALF, &s) || s.tsc - last.tsc < arch_ns_to_cycles(REFINE_MIN_GAP_NS))
        return false;
    if (skew_request) {     // the rate set off by skew_request, as if it had gone wrong long ago
        uint64_t hz = arch_tsc_hz(), d = mul_div(hz, (uint64_t)(skew_request < 0 ? -skew_request : skew_request), PPB);
        conv_set(skew_request < 0 ? hz - d : hz + d);
        skew_request = 0;
        skews++;
        anchor = last = s;
        anchor_ticks = disagreed_ticks = 0;
        return true;
    }
    uint64_t sub = ticks_since_last(&s);
    if (!sub)
        return false;
    uint64_t sub_hz = mul_div(s.tsc - last.tsc, ref.hz, sub), sub_bound = bound_of(&last, &s, sub);
    bool correct = false;
    if (!rates_agree(sub_hz, sub_bound, arch_tsc_hz(), bound_ppb)) {
        // The stretch before disagreed too when disagreed_ticks is set:
        // the anchor was moved to its end (anchor == last, no ticks yet).
        correct = disagreed_ticks &&
                  rates_agree(sub_hz, sub_bound, mul_div(last.tsc - disagreed_from.tsc, ref.hz, disagreed_ticks),
                              bound_of(&disagreed_from, &last, disagreed_ticks));
        if (!correct) {
            disagreed_from = last;  // a step, or the first sign that the rate is off
            disagreed_ticks = sub;
            anchor = last = s;      // measure again from here
            anchor_ticks = 0;
            steps++;
            __atomic_store_n(&next_refine, s.tsc + arch_ns_to_cycles(REFINE_FIRST_NS), __ATOMIC_RELAXED);  // relaxed: a hint
            return false;
        }
        anchor = disagreed_from;    // the two stretches are one measurement
        anchor_ticks = disagreed_ticks;
        corrections++;
    }
    disagreed_ticks = 0;
    last = s;
    anchor_ticks += sub;
    uint64_t bound = bound_of(&anchor, &s, anchor_ticks);
    __atomic_store_n(&next_refine, anchor.tsc + 10 * (s.tsc - anchor.tsc), __ATOMIC_RELAXED);  // relaxed: a hint
    if (!force && !correct && bound >= bound_ppb)
        return false;
    window_cycles = s.tsc - anchor.tsc;
    bound_ppb = bound;
    refinements++;
    conv_set(mul_div(window_cycles, ref.hz, anchor_ticks));
    return true;
}

bool arch_clock_refine(uint64_t now, bool force)
{
    if (!refinable)
        return false;
    if (cpu_index() != 0) {         // the readings are core 0's TSC: have sysmon do it
        if (force)
            __atomic_store_n(&next_refine, 0, __ATOMIC_RELAXED);   // relaxed: a hint; core 0 takes the lock
        return false;
    }
    if (!force && now < __atomic_load_n(&next_refine, __ATOMIC_RELAXED))   // relaxed: a hint; the work is under the lock
        return false;
    spin_lock(&refine_lock);
    bool changed = refine_locked(force);
    spin_unlock(&refine_lock);
    return changed;
}

void arch_clock_skew_for_test(int64_t ppb)
{
    ASSERT(ppb > -(int64_t)PPB / 10 && ppb < (int64_t)PPB / 10);
    spin_lock(&refine_lock);
    skew_request = ppb;
    __atomic_store_n(&next_refine, 0, __ATOMIC_RELAXED);   // relaxed: a hint; core 0 takes the lock
    spin_unlock(&refine_lock);
}

void arch_clock_info(struct arch_clock_info *ci)
{
    spin_lock(&refine_lock);
    *ci = (struct arch_clock_info){
        .hz = arch_tsc_hz(), .source = source, .window_ns = arch_cycles_to_ns(window_cycles),
        .bound_ppb = bound_ppb, .refinements = refinements, .steps = steps, .corrections = corrections,
        .skews = skews, .refinable = refinable,
        .boot_hz = boot_hz, .boot_bound_ppb = boot_bound_ppb, .boot_window_ns = arch_cycles_to_ns(boot_window_cycles),
        // the writer holds refine_lock too: no seqlock read needed
        .cur_base_tsc = conv.cur.base_tsc, .cur_base_ns = conv.cur.base_ns, .cur_mult = conv.cur.mult,
        .prev_base_tsc = conv.prev.base_tsc, .prev_base_ns = conv.prev.base_ns, .prev_mult = conv.prev.mult,
    };
    spin_unlock(&refine_lock);
}
