// SPDX-License-Identifier: MIT
//
// peers.c - the 1:1-thread side of goro's benchmark comparison: the
// workloads of tests/peers/go that exist for OS threads, with the same
// names and output format (tests/peers/README.md). Each measured
// repetition is bracketed by insncount's marker NOPs, so that under QEMU
// TCG with the plugin loaded the instructions per operation can be taken
// from the same run (tools/bench/insncount_report.py).
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

// nopl 0xFEED00xx(%rax): a NOP on hardware, a counter dump under insncount.
#define MARK_BEGIN() __asm__ volatile(".byte 0x0f,0x1f,0x80,0x01,0x00,0xed,0xfe" ::: "memory")
#define MARK_END()   __asm__ volatile(".byte 0x0f,0x1f,0x80,0x02,0x00,0xed,0xfe" ::: "memory")

static int reps = 31;
static int64_t target_ns = 50000000;
static int quick;
static int ncpu;
static int cpus[CPU_SETSIZE]; // the CPUs we may run on; benchmarks pin by index
static int marking; // set while a measured (not calibrating) repetition runs

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// Every benchmark times its region with these two, so the markers sit
// exactly where the clock is read.
static int64_t region_begin(void)
{
	if (marking)
		MARK_BEGIN();
	return now_ns();
}

static int64_t region_end(int64_t t0)
{
	int64_t d = now_ns() - t0;
	if (marking)
		MARK_END();
	return d;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "peers-pthread: %s: %s\n", what, strerror(err));
	exit(1);
}

static void pin_self(int idx)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpus[idx], &set);
	int err = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	if (err)
		die("pthread_setaffinity_np", err);
}

static pthread_t spawn(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	int err = pthread_create(&t, NULL, fn, arg);
	if (err)
		die("pthread_create", err);
	return t;
}

// ---- statistics (nearest-rank quantiles, as the Go peer)

struct stats { double min, p10, p50, p90, p99, max, mean; };

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double rank(const double *s, int n, double p)
{
	int i = (int)(p * n + 0.999999) - 1;
	if (i < 0)
		i = 0;
	if (i >= n)
		i = n - 1;
	return s[i];
}

static struct stats summarize(double *xs, int n)
{
	struct stats st;
	double sum = 0;
	qsort(xs, n, sizeof *xs, cmp_double);
	for (int i = 0; i < n; i++)
		sum += xs[i];
	st.min = xs[0];
	st.max = xs[n - 1];
	st.p10 = rank(xs, n, 0.10);
	st.p50 = rank(xs, n, 0.50);
	st.p90 = rank(xs, n, 0.90);
	st.p99 = rank(xs, n, 0.99);
	st.mean = sum / n;
	return st;
}

typedef int64_t (*run_fn)(long n, int procs);

// calibrate finds a fixed n for which run(n) takes at least target_ns, so
// that every repetition then does exactly the same work.
static long calibrate(run_fn run, int procs, long n)
{
	run(n, procs); // first touches (stacks, page faults) would skew n
	for (;;) {
		int64_t d = run(n, procs);
		if (d >= target_ns || n >= (1L << 30))
			return n;
		double grow = d > 0 ? 1.2 * (double)target_ns / (double)d : 2.0;
		if (grow > 100)
			grow = 100;
		if (grow < 1.5)
			grow = 1.5;
		n = (long)(n * grow);
	}
}

// measure runs the calibrated n reps times and prints ns per operation
// with its spread; each repetition is one marker pair of n operations.
static void measure(const char *name, int procs, const char *extra, run_fn run, long n0)
{
	long n = calibrate(run, procs, n0);
	double *per = malloc(reps * sizeof *per);
	marking = 1;
	for (int i = 0; i < reps; i++)
		per[i] = (double)run(n, procs) / (double)n;
	marking = 0;
	struct stats s = summarize(per, reps);
	printf("BENCH %s impl=pthread procs=%d n=%ld reps=%d ns_per_op=%.1f ns_per_op_min=%.1f "
	       "ns_per_op_p10=%.1f ns_per_op_p90=%.1f ns_per_op_max=%.1f %s mark_pairs=%d mark_n=%ld\n",
	       name, procs, n, reps, s.p50, s.min, s.p10, s.p90, s.max, extra, reps, n);
	fflush(stdout);
	free(per);
}

// ---- threads

static void *noop(void *arg)
{
	return arg;
}

// An op is one pthread_create of a thread that returns at once, and its join.
static int64_t run_spawn_exit(long n, int procs)
{
	(void)procs;
	int64_t t0 = region_begin();
	for (long i = 0; i < n; i++)
		pthread_join(spawn(noop, NULL), NULL);
	return region_end(t0);
}

// Two threads whose start the main thread releases through a barrier, so
// thread creation stays outside the timed region.
struct pair {
	pthread_barrier_t go;
	long n;
	int cpu[2];
	// pingpong state, under mu
	pthread_mutex_t mu;
	pthread_cond_t cv[2];
	int turn;
};

static void pair_run(struct pair *p, void *(*fn)(void *), int64_t *elapsed)
{
	pthread_t t[2];
	void *arg[2][2];
	pthread_barrier_init(&p->go, NULL, 3);
	for (int i = 0; i < 2; i++) {
		arg[i][0] = p;
		arg[i][1] = (void *)(intptr_t)i;
		t[i] = spawn(fn, arg[i]);
	}
	// The clock starts before the release: on one CPU the workers may run
	// to completion before this thread returns from the barrier.
	int64_t t0 = region_begin();
	pthread_barrier_wait(&p->go);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	*elapsed = region_end(t0);
	pthread_barrier_destroy(&p->go);
}

static void *yielder(void *a)
{
	struct pair *p = ((void **)a)[0];
	int me = (int)(intptr_t)((void **)a)[1];
	pin_self(p->cpu[me]);
	pthread_barrier_wait(&p->go);
	for (long i = 0; i < p->n; i++)
		sched_yield();
	return NULL;
}

// An op is one switch: two threads pinned to CPU 0 each call sched_yield n/2 times.
static int64_t run_yield_switch(long n, int procs)
{
	(void)procs;
	struct pair p = { .n = n / 2, .cpu = { 0, 0 } };
	int64_t d;
	pair_run(&p, yielder, &d);
	return d;
}

static void *ponger(void *a)
{
	struct pair *p = ((void **)a)[0];
	int me = (int)(intptr_t)((void **)a)[1];
	pin_self(p->cpu[me]);
	pthread_barrier_wait(&p->go);
	pthread_mutex_lock(&p->mu);
	for (long i = 0; i < p->n; i++) {
		while (p->turn != me)
			pthread_cond_wait(&p->cv[me], &p->mu);
		p->turn = !me;
		pthread_cond_signal(&p->cv[!me]);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

// An op is one round trip: thread 0 hands the turn to thread 1 and waits
// for it back, through one mutex and a condition variable per side.
static int64_t run_pingpong(long n, int procs)
{
	struct pair p = { .n = n, .cpu = { 0, procs > 1 ? 1 : 0 }, .turn = 0 };
	int64_t d;
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cv[0], NULL);
	pthread_cond_init(&p.cv[1], NULL);
	pair_run(&p, ponger, &d);
	pthread_cond_destroy(&p.cv[0]);
	pthread_cond_destroy(&p.cv[1]);
	pthread_mutex_destroy(&p.mu);
	return d;
}

// ---- sleep

static void bench_sleep(const char *name, long sleep_ns)
{
	int samples = quick ? 100 : 500;
	if (sleep_ns < 100000)
		samples *= 2;
	struct timespec ts = { 0, sleep_ns };
	double *lat = malloc(samples * sizeof *lat);
	for (int i = 0; i < 3; i++)
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	marking = 1;
	MARK_BEGIN();
	for (int i = 0; i < samples; i++) {
		int64_t t0 = now_ns();
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		lat[i] = (double)(now_ns() - t0 - sleep_ns);
	}
	MARK_END();
	marking = 0;
	struct stats s = summarize(lat, samples);
	printf("BENCH %s impl=pthread procs=1 sleep_us=%g timerslack_ns=%d samples=%d min_us=%.2f p50_us=%.2f "
	       "p90_us=%.2f p99_us=%.2f max_us=%.2f mean_us=%.2f mark_pairs=1 mark_n=%d\n",
	       name, sleep_ns / 1e3, prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0), samples, s.min / 1e3, s.p50 / 1e3,
	       s.p90 / 1e3, s.p99 / 1e3, s.max / 1e3, s.mean / 1e3, samples);
	fflush(stdout);
	free(lat);
}

// ---- mutex

static pthread_mutex_t bench_mu = PTHREAD_MUTEX_INITIALIZER;

static int64_t run_mutex_uncontended(long n, int procs)
{
	(void)procs;
	int64_t t0 = region_begin();
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&bench_mu);
		pthread_mutex_unlock(&bench_mu);
	}
	return region_end(t0);
}

enum { MUTEX_WORKERS = 4 };

struct contend {
	pthread_barrier_t go;
	long per;
	long counter; // under bench_mu
};

static void *contender(void *a)
{
	struct contend *c = a;
	pthread_barrier_wait(&c->go);
	for (long i = 0; i < c->per; i++) {
		pthread_mutex_lock(&bench_mu);
		c->counter++;
		pthread_mutex_unlock(&bench_mu);
	}
	return NULL;
}

// MUTEX_WORKERS threads on all CPUs take turns on one mutex guarding a
// counter; an op is one lock+unlock by any of them.
static int64_t run_mutex_contended(long n, int procs)
{
	(void)procs;
	struct contend c = { .per = n / MUTEX_WORKERS };
	pthread_t t[MUTEX_WORKERS];
	pthread_barrier_init(&c.go, NULL, MUTEX_WORKERS + 1);
	for (int i = 0; i < MUTEX_WORKERS; i++)
		t[i] = spawn(contender, &c);
	int64_t t0 = region_begin(); // before the release, as in pair_run
	pthread_barrier_wait(&c.go);
	for (int i = 0; i < MUTEX_WORKERS; i++)
		pthread_join(t[i], NULL);
	int64_t d = region_end(t0);
	pthread_barrier_destroy(&c.go);
	if (c.counter != c.per * MUTEX_WORKERS) {
		fprintf(stderr, "peers-pthread: mutex_contended lost updates\n");
		exit(1);
	}
	// The timed region covers n rounded down to whole workers' shares.
	return n == c.per * MUTEX_WORKERS ? d : d * n / (c.per * MUTEX_WORKERS);
}

// ---- driver

static void b_yield_switch(const char *n) { measure(n, 1, "op=switch", run_yield_switch, 1000); }
static void b_spawn_exit(const char *n) { measure(n, ncpu, "op=create_join", run_spawn_exit, 100); }
static void b_pingpong_1p(const char *n) { measure(n, 1, "op=roundtrip", run_pingpong, 1000); }
static void b_pingpong_2p(const char *n) { measure(n, 2, "op=roundtrip", run_pingpong, 1000); }
static void b_sleep_1us(const char *n) { bench_sleep(n, 1000); }
static void b_sleep_100us(const char *n) { bench_sleep(n, 100000); }
static void b_sleep_1ms(const char *n) { bench_sleep(n, 1000000); }
static void b_mutex_uncontended(const char *n)
{
    measure(n, 1, "op=lock_unlock", run_mutex_uncontended, 100000);
}

static void b_mutex_contended(const char *n)
{
	char extra[64];
	snprintf(extra, sizeof extra, "op=lock_unlock threads=%d", MUTEX_WORKERS);
	measure(n, ncpu, extra, run_mutex_contended, 10000);
}

static const struct {
	const char *name;
	int min_cpus;
	void (*run)(const char *);
} benches[] = {
	{ "yield_switch", 1, b_yield_switch },
	{ "spawn_exit", 1, b_spawn_exit },
	{ "sleep_lateness_1us", 1, b_sleep_1us },
	{ "sleep_lateness_100us", 1, b_sleep_100us },
	{ "sleep_lateness_1ms", 1, b_sleep_1ms },
	{ "pingpong_1p", 1, b_pingpong_1p },
	{ "pingpong_2p", 2, b_pingpong_2p },
	{ "mutex_uncontended", 1, b_mutex_uncontended },
	{ "mutex_contended", 1, b_mutex_contended },
};

static void cpu_model(char *buf, size_t len)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");
	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		char *colon = strchr(line, ':');
		if (strncmp(line, "model name", 10) == 0 && colon) {
			colon += 1 + (colon[1] == ' ');
			colon[strcspn(colon, "\n")] = 0;
			snprintf(buf, len, "%s", colon);
			break;
		}
	}
	fclose(f);
}

static void usage(void)
{
	fprintf(stderr, "usage: peers-pthread [-filter REGEX] [-quick] [-reps N] [-accel LABEL] [-list]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *filter = "", *accel = NULL;
	int list = 0, reps_arg = 0;
	// Go's flag syntax (one or two dashes, -name value or -name=value), so
	// that the guest script passes the same arguments to both peers.
	for (int i = 1; i < argc; i++) {
		char *a = argv[i], *val = NULL;
		if (a[0] != '-')
			usage();
		a += 1 + (a[1] == '-');
		char *eq = strchr(a, '=');
		if (eq) {
			*eq = 0;
			val = eq + 1;
		}
		if (!strcmp(a, "quick"))
			quick = 1;
		else if (!strcmp(a, "list"))
			list = 1;
		else if (!strcmp(a, "filter") || !strcmp(a, "accel") || !strcmp(a, "reps")) {
			if (!val && i + 1 < argc)
				val = argv[++i];
			if (!val)
				usage();
			if (!strcmp(a, "filter"))
				filter = val;
			else if (!strcmp(a, "accel"))
				accel = val;
			else
				reps_arg = atoi(val);
		} else
			usage();
	}
	if (list) {
		for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++)
			puts(benches[i].name);
		return 0;
	}
	regex_t re;
	if (regcomp(&re, filter, REG_EXTENDED | REG_NOSUB)) {
		fprintf(stderr, "peers-pthread: bad -filter\n");
		return 2;
	}
	if (quick) {
		reps = 11;
		target_ns = 10000000;
	}
	if (reps_arg > 0)
		reps = reps_arg;
	cpu_set_t set;
	sched_getaffinity(0, sizeof set, &set);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			cpus[ncpu++] = c;
	char model[128];
	cpu_model(model, sizeof model);
	if (!accel)
		accel = strstr(model, "QEMU TCG") ? "tcg" : "native";
	struct utsname u;
	uname(&u);
	printf("CONFIG impl=pthread cores=%d gomaxprocs=%d accel=%s cpu=\"%s\" kernel=%s quick=%d reps=%d\n",
	       ncpu, ncpu, accel, model, u.release, quick, reps);
	fflush(stdout);
	for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++) {
		if (regexec(&re, benches[i].name, 0, NULL, 0))
			continue;
		if (ncpu < benches[i].min_cpus) {
			printf("SKIP %s impl=pthread reason=needs_%d_cores\n", benches[i].name, benches[i].min_cpus);
			continue;
		}
		benches[i].run(benches[i].name);
	}
	printf("DONE impl=pthread\n");
	return 0;
}
