// SPDX-License-Identifier: MIT
// run and bench: an app as a goroutine, its exit value, and what it left
// behind.
//
// A run. The shell notes what exists (the ids of the live goroutines,
// malloc's blocks in use, free pages, gomaxprocs, the quantum, the steal
// order), starts the app's main as a goroutine and waits for the first of:
// the main's return value, an exit() from any goroutine, or Ctrl-C
// (console_fg_begin's channel). Then it says which, waits a little for
// goroutines that are about to finish, and reports the goroutines that
// are still alive and not there before, the memory still allocated, and
// the settings the app changed. Apps are expected to leave the machine as
// they found it; the report shows which do not.
//
// exit() under the shell ends the calling goroutine, not the machine: the
// catcher hands the code to `done`, where a returning main puts its value,
// and exit() calls goexit(). Which run the goroutine belongs to is not
// known: one that an earlier run left behind and that calls exit() during
// a later run is taken for the later run's.
//
// Ctrl-C cannot stop an app's goroutines safely: a goroutine may hold a
// lock or sit in a channel's wait queue, and nothing can unwind it from
// outside (Go cannot kill a goroutine either). The shell stops waiting and
// reports the run as abandoned; its goroutines run on, and ps lists them.
// Console reads the app left waiting return -1 (console_fg_end).
//
// A fatal error (panic, an exception, a deadlock report) stops the machine
// as always: it means the kernel's state can no longer be trusted. Under
// the shell the deadlock detector stays quiet, because the console's
// reader goroutines wait in irq_wait, which counts as outside work: a
// deadlocked app is a run that never ends, and Ctrl-C gives the prompt back.
#include "shell/shell.h"
#include "kernel/app.h"
#include "kernel/cmdline.h"
#include "shell/console_in.h"
#include "kernel/malloc.h"
#include "kernel/page.h"
#include "kernel/sched.h"
#include "lib/printf.h"
#include "lib/string.h"

#define STRAGGLER_WAIT_NS 200000000ull     // for goroutines about to finish
#define LEFTOVERS_SHOWN 10


struct run_ctx;
struct result {
    uint64_t run;                   // the run it ended (run_now at the time)
    int code;
    bool exited;                    // exit(code), not main's return
    uint64_t goid;                  // who called exit()
    struct run_ctx *ctx;            // main returned: its run's context, done with
};

// Made in shell_run_init, before any app runs; one slot, drained before
// each run. Senders never block (chan_try_send): an abandoned app that
// returns late finds the slot taken or stale, and nobody waits for it.
static chan_t *done;
static uint64_t run_now;            // atomic: the run in progress, 0 between runs
static uint64_t runs;               // the shell goroutine only

// The main goroutines of the latest runs, for ps and the reports: the
// shell goroutine alone writes and reads this.
#define MAINS_KEPT 64
static struct {
    uint64_t goid, run;
    const char *app;
} mains[MAINS_KEPT];

static const char *shell_run_main_of(uint64_t goid, uint64_t *run)
{
    for (int i = 0; i < MAINS_KEPT; i++)
        if (mains[i].goid == goid && mains[i].app) {
            *run = mains[i].run;
            return mains[i].app;
        }
    return 0;
}

struct run_ctx {
    uint64_t run;
    const struct goro_app *app;
    int argc;
    char *argv[SHELL_MAX_WORDS + 1];
    char words[512];                // argv's strings, one after another
};

static bool catch_exit(int code)
{
    uint64_t run = __atomic_load_n(&run_now, __ATOMIC_ACQUIRE);   // acquire: pairs with run_app's release
    uint64_t id = goid();
    if (!run) {
        kprintf("shell: goroutine %lu called exit(%d) while no app runs: that goroutine ends\n", id,
                code);
        return true;
    }
    struct result r = { run, code, true, id, 0 };
    if (!chan_try_send(done, &r))
        kprintf("shell: goroutine %lu called exit(%d) after the run had ended: that goroutine "
                "ends\n", id, code);
    return true;
}

void shell_run_init(void)
{
    done = chan_make(sizeof(struct result), 1);
    app_set_exit_catcher(catch_exit);
}

static void app_goroutine(void *arg)
{
    struct run_ctx *c = arg;
    struct result r = { c->run, c->app->main(c->argc, c->argv), false, goid(), c };
    if (!chan_try_send(done, &r))   // c is not touched after this: the shell frees it
        kprintf("shell: the main goroutine of run %lu returned %d after its run had ended\n",
                r.run, r.code);
}

// ---- what exists before and after --------------------------------------------------

static void late(const struct result *r);

static bool g_live(const struct g *gp)
{
    uint32_t s = SNAPSHOT(gp->status);
    return s != G_DEAD && s != G_IDLE;
}

struct idset {
    uint64_t *ids;
    size_t n, cap;
};

static void collect_live(struct g *gp, void *arg)
{
    struct idset *set = arg;
    if (g_live(gp) && set->n < set->cap)
        set->ids[set->n++] = gp->id;
}

static void count_all(struct g *gp, void *arg)
{
    (void)gp;
    (*(size_t *)arg)++;
}

static bool in_set(const struct idset *set, uint64_t id)
{
    size_t lo = 0, hi = set->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (set->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < set->n && set->ids[lo] == id;
}

struct snapshot {
    struct idset live;              // sorted
    uint64_t blocks, bytes;         // malloc in use
    uint64_t free_pages;
    int procs;
    uint64_t quantum;
    enum steal_policy steal;
};

// The counters first, then (with_ids) the live goroutines' ids: the ids'
// own array is never in the counts it is compared with (report_after frees
// it before it counts again).
static void snapshot_take(struct snapshot *s, bool with_ids)
{
    struct malloc_stats ms;
    malloc_stats(&ms);
    s->blocks = ms.blocks_in_use;
    s->bytes = ms.bytes_in_use;
    s->free_pages = page_free_count();
    s->procs = gomaxprocs(0);
    s->quantum = SNAPSHOT(quantum_cycles);
    s->steal = SNAPSHOT(kparams.steal);
    s->live = (struct idset){ 0 };
    if (!with_ids)
        return;
    size_t all = 0;
    g_for_each(count_all, &all);
    s->live.cap = all + 64;         // Gs made while we walk are new anyway
    s->live.ids = malloc(s->live.cap * sizeof(uint64_t));
    g_for_each(collect_live, &s->live);
    sort_u64(s->live.ids, s->live.n);
}

struct leftovers {
    const struct idset *before;
    size_t n;
    struct g *shown[LEFTOVERS_SHOWN];
};

static void collect_new(struct g *gp, void *arg)
{
    struct leftovers *l = arg;
    if (!g_live(gp) || in_set(l->before, gp->id))
        return;
    if (l->n < LEFTOVERS_SHOWN)
        l->shown[l->n] = gp;
    l->n++;
}

static size_t leftovers_find(const struct snapshot *before, struct leftovers *l)
{
    l->before = &before->live;
    l->n = 0;
    g_for_each(collect_new, l);
    return l->n;
}

static void describe_g(struct g *gp)
{
    uint32_t s = SNAPSHOT(gp->status);
    const char *why = SNAPSHOT(gp->waitreason);
    char entry[48];
    shell_g_entry(gp, entry, sizeof entry);
    kprintf("    goroutine %lu [%s%s%s] created by %lu, entry %s\n", gp->id, gstatus_name(s),
            s == G_WAITING && why ? ", " : "", s == G_WAITING && why ? why : "", gp->parent_id,
            entry);
}

static const char *steal_name(enum steal_policy p)
{
    return p == STEAL_FLAT ? "flat" : "numa";
}

static void report_after(struct snapshot *before)
{
    struct leftovers l;
    // Goroutines the app started just before it returned may still be on
    // their way out: give them a moment, as a person at the prompt would.
    struct result r;
    for (uint64_t t0 = nanotime();; sleep_ns(1000000)) {
        while (chan_try_recv(done, &r) == CHAN_RECEIVED)
            late(&r);               // an abandoned app's main, returning as it is cancelled
        if (!leftovers_find(before, &l) || nanotime() - t0 >= STRAGGLER_WAIT_NS)
            break;
    }
    free(before->live.ids);
    struct snapshot after;
    snapshot_take(&after, false);
    int64_t blocks = (int64_t)(after.blocks - before->blocks);
    int64_t bytes = (int64_t)(after.bytes - before->bytes);
    int64_t pages = (int64_t)(after.free_pages - before->free_pages);
    char b[24];
    shell_fmt_bytes(b, sizeof b, (uint64_t)(bytes < 0 ? -bytes : bytes));
    kprintf("run: left behind: %lu goroutines, %ld malloc blocks (%s%s); free pages %+ld\n", l.n,
            blocks, bytes < 0 ? "-" : "", b, pages);
    for (size_t i = 0; i < l.n && i < LEFTOVERS_SHOWN; i++)
        describe_g(l.shown[i]);
    if (l.n > LEFTOVERS_SHOWN)
        kprintf("    ... and %lu more (ps lists them all)\n", l.n - LEFTOVERS_SHOWN);
    if (after.procs != before->procs)
        kprintf("run: the app changed gomaxprocs from %d to %d\n", before->procs, after.procs);
    // In microseconds: a quantum set back from a value read in ns comes
    // back a cycle or two off.
    uint64_t q0 = (arch_cycles_to_ns(before->quantum) + 500) / 1000;
    uint64_t q1 = (arch_cycles_to_ns(after.quantum) + 500) / 1000;
    if (q0 != q1)
        kprintf("run: the app changed the quantum from %lu us to %lu us\n", q0, q1);
    if (after.steal != before->steal)
        kprintf("run: the app changed the steal order from %s to %s\n", steal_name(before->steal),
                steal_name(after.steal));
}

// ---- one run -------------------------------------------------------------------------

// A result for a run that ended before it came (Ctrl-C): said, and the
// run's context freed once its main has returned.
static void late(const struct result *r)
{
    if (r->exited)
        kprintf("run: (goroutine %lu of run %lu called exit(%d) after the run had ended)\n",
                r->goid, r->run, r->code);
    else
        kprintf("run: (the main goroutine of run %lu returned %d after the run had ended)\n",
                r->run, r->code);
    free(r->ctx);
}

// Runs app with argv[0..argc) (argv[0] its name); returns its exit value,
// or 130 when Ctrl-C abandoned it (a shell's value for an interrupt).
static int run_app(const struct goro_app *app, int argc, char **argv)
{
    struct result r;
    while (chan_try_recv(done, &r) == CHAN_RECEIVED)
        late(&r);
    // The console's own bookkeeping for a run (its cancel channel) comes
    // before the snapshot, so that it is not taken for the app's.
    chan_t *intr = console_fg_begin();
    struct snapshot before;
    snapshot_take(&before, true);
    struct run_ctx *c = calloc(1, sizeof *c);
    c->app = app;
    c->argv[0] = (char *)app->name;
    c->argc = 1;
    size_t used = 0;
    for (int i = 1; i < argc && c->argc < SHELL_MAX_WORDS; i++) {
        size_t n = strlen(argv[i]) + 1;
        if (used + n > sizeof c->words)
            break;                  // a command line is shorter than this
        memcpy(c->words + used, argv[i], n);
        c->argv[c->argc++] = c->words + used;
        used += n;
    }
    c->run = ++runs;
    __atomic_store_n(&run_now, c->run, __ATOMIC_RELEASE);  // release: pairs with catch_exit's acquire
    uint64_t t0 = nanotime();
    uint64_t main_id = go(app_goroutine, c);
    mains[c->run % MAINS_KEPT].goid = main_id;
    mains[c->run % MAINS_KEPT].run = c->run;
    mains[c->run % MAINS_KEPT].app = app->name;
    bool abandoned = false;
    for (;;) {
        struct select_case cases[2] = {
            { .c = done, .dir = SELECT_RECV, .elem = &r },
            { .c = intr, .dir = SELECT_RECV },
        };
        if (chan_select(cases, 2, true) == 1) {
            abandoned = true;
            break;
        }
        if (r.run == c->run)
            break;
        late(&r);
    }
    uint64_t took = nanotime() - t0;
    __atomic_store_n(&run_now, 0, __ATOMIC_RELEASE);       // release: pairs with catch_exit's acquire
    console_fg_end();

    char t[24];
    shell_fmt_ns(t, sizeof t, took);
    int code;
    if (abandoned) {
        kprintf("^C\nrun: %s interrupted after %s: its goroutines run on (ps lists them)\n",
                app->name, t);
        code = 130;
    } else if (r.exited) {
        kprintf("run: %s called exit(%d) in goroutine %lu after %s\n", app->name, r.code, r.goid, t);
        code = r.code;
    } else {
        kprintf("run: %s returned %d after %s\n", app->name, r.code, t);
        code = r.code;
    }
    // The context goes only once the app's main has returned: after an
    // exit() or Ctrl-C it may still be reading its arguments.
    if (!abandoned && !r.exited)
        free(c);
    report_after(&before);
    return code;
}

void shell_g_entry(struct g *gp, char *buf, size_t cap)
{
    uint64_t run, off;
    const char *app = shell_run_main_of(gp->id, &run);
    const char *sym = arch_symbolize((uint64_t)gp->fn, &off);
    if (app)
        snprintf(buf, cap, "main of %s (run %lu)", app, run);
    else
        snprintf(buf, cap, "%s", sym ? sym : "?");
}

static void list_apps(void)
{
    // By name; there are a few dozen, so insertion sort.
    const struct goro_app *sorted[256];
    size_t n = 0;
    for (size_t i = 0; i < app_count() && n < 256; i++) {
        const struct goro_app *a = app_at(i);
        size_t k = n++;
        while (k > 0 && strcmp(sorted[k - 1]->name, a->name) > 0) {
            sorted[k] = sorted[k - 1];
            k--;
        }
        sorted[k] = a;
    }
    kprintf("apps:\n");
    for (size_t i = 0; i < n; i++)
        kprintf("  %-22s %s\n", sorted[i]->name, sorted[i]->help);
}

int shell_cmd_run(int argc, char **argv)
{
    if (argc < 2) {
        kprintf("usage: run APP [ARGS...]\n");
        list_apps();
        return 1;
    }
    const struct goro_app *app = app_find(argv[1]);
    if (!app) {
        kprintf("run: no app named \"%s\" (run alone lists them)\n", argv[1]);
        return 1;
    }
    if (strcmp(app->name, "shell") == 0) {
        kprintf("run: the shell runs already\n");
        return 1;
    }
    return run_app(app, argc - 1, argv + 1);
}

// ---- bench ---------------------------------------------------------------------------

// The benchmark apps, in the order bench and app=bench_all run them.
static const char *const bench_apps[] = { "bench", "bench_chan", "bench_mem", "bench_time" };
#define NBENCH_APPS (sizeof bench_apps / sizeof bench_apps[0])

// bench [FILTER] [ARGS...]: each benchmark app with filter=FILTER and the
// ARGS (key=value words). quick=1 means each app's quick mode; bench_mem
// has none, so there it means fewer repetitions and a smaller chase (as
// app=bench_all does).
int shell_cmd_bench(int argc, char **argv)
{
    char filter[64] = "";
    int first = 1;
    if (argc > 1 && !strchr(argv[1], '=')) {
        snprintf(filter, sizeof filter, "filter=%s", argv[1]);
        first = 2;
    }
    int failed = 0;
    for (size_t i = 0; i < NBENCH_APPS; i++) {
        const struct goro_app *a = app_find(bench_apps[i]);
        if (!a)
            continue;
        bool mem = strcmp(bench_apps[i], "bench_mem") == 0;
        char *words[SHELL_MAX_WORDS + 2];
        int n = 0;
        words[n++] = (char *)bench_apps[i];
        if (filter[0])
            words[n++] = filter;
        for (int k = first; k < argc && n < SHELL_MAX_WORDS - 1; k++) {
            if (mem && strcmp(argv[k], "quick=1") == 0) {
                words[n++] = "reps=5";
                words[n++] = "mb=16";
            } else {
                words[n++] = argv[k];
            }
        }
        words[n] = 0;
        kprintf("bench: %s", bench_apps[i]);
        for (int k = 1; k < n; k++)
            kprintf(" %s", words[k]);
        kprintf("\n");
        failed += run_app(a, n, words) != 0;
    }
    kprintf("bench: %d of %zu apps failed\n", failed, NBENCH_APPS);
    return failed ? 1 : 0;
}

// app=bench_all [quick=1]: the benchmark apps in one boot without the
// shell, their mains called in turn, for a real machine whose serial
// capture tools/bench/bench.py --from-serial reads (each prints its own CONFIG
// line). quick=1 as the shell's bench takes it.
static int bench_all_main(int argc, char **argv)
{
    bool q = argc > 1 && strcmp(argv[1], "quick=1") == 0;
    if (argc > 2 || (argc == 2 && !q)) {
        printf("bench_all: unknown argument \"%s\" (quick=1)\n", argv[argc - 1]);
        return 2;
    }
    int failed = 0;
    for (size_t i = 0; i < NBENCH_APPS; i++) {
        const struct goro_app *a = app_find(bench_apps[i]);
        if (!a)
            continue;
        char *quick_args[] = { (char *)bench_apps[i], "quick=1", 0 };
        char *mem_args[] = { (char *)bench_apps[i], "reps=5", "mb=16", 0 };
        char *none[] = { (char *)bench_apps[i], 0 };
        bool mem = strcmp(bench_apps[i], "bench_mem") == 0;
        int r = !q ? a->main(1, none) : mem ? a->main(3, mem_args) : a->main(2, quick_args);
        printf("bench_all: %s returned %d\n", bench_apps[i], r);
        failed += r != 0;
    }
    return failed ? 1 : 0;
}
GORO_APP(bench_all, "every benchmark app in one boot, for serial captures (quick=1)",
         bench_all_main);
