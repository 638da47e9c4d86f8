// SPDX-License-Identifier: MIT

// Command peers is the Go side of goro's benchmark comparison: the same
// workloads goro's app=bench runs, written with goroutines, channels and
// sync, so that both can be measured under the same QEMU TCG and natively.
// Output is one `BENCH name key=value ...` line per result; the names and
// keys are described in tests/peers/README.md and must not drift.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	_ "unsafe" // go:linkname
)

// nanotime is the runtime's monotonic clock: cheaper than time.Now, which
// also reads the wall clock, so the timing overhead is closer to goro's.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

var (
	filterFlag  = flag.String("filter", "", "regexp selecting benchmarks by name")
	quickFlag   = flag.Bool("quick", false, "fewer and shorter repetitions")
	accelFlag   = flag.String("accel", "", "label for CONFIG accel= (default: guessed from /proc/cpuinfo)")
	repsFlag    = flag.Int("reps", 0, "repetitions per benchmark (default 11 quick, 31 full)")
	listFlag    = flag.Bool("list", false, "print the benchmark names and exit")
	wakeGapFlag = flag.Duration("wakegap", time.Millisecond, "wake_latency: busy gap between samples")
)

var (
	filterRE *regexp.Regexp
	reps     int
	targetNs int64 // wall time one calibrated repetition should take
	ncpu     int
	out      = bufio.NewWriter(os.Stdout)
)

type bench struct {
	name    string
	minCPUs int
	run     func(name string)
}

var benches = []bench{
	{"yield_switch", 1, benchYieldSwitch},
	{"spawn_exit", 1, benchSpawnExit},
	{"spawn_tree_fib", 1, benchSpawnTreeFib},
	{"uneven_work", 1, benchUnevenWork},
	{"wake_latency", 2, benchWakeLatency},
	{"sleep_lateness_1us", 1, func(n string) { benchSleepLateness(n, time.Microsecond) }},
	{"sleep_lateness_100us", 1, func(n string) { benchSleepLateness(n, 100*time.Microsecond) }},
	{"sleep_lateness_1ms", 1, func(n string) { benchSleepLateness(n, time.Millisecond) }},
	{"ticker_lateness_hogs", 1, benchTickerHogs},
	{"chan_sync", 1, benchChanSync},
	{"pingpong_1p", 1, func(n string) { benchPingPong(n, 1) }},
	{"pingpong_2p", 2, func(n string) { benchPingPong(n, 2) }},
	{"chan_buffered", 1, benchChanBuffered},
	{"select_uncontended", 1, benchSelectUncontended},
	{"mutex_uncontended", 1, benchMutexUncontended},
	{"mutex_contended", 1, benchMutexContended},
	{"parked_g_bytes", 1, benchParkedGBytes},
}

func main() {
	flag.Parse()
	if *listFlag {
		for _, b := range benches {
			fmt.Println(b.name)
		}
		return
	}
	var err error
	if filterRE, err = regexp.Compile(*filterFlag); err != nil {
		fmt.Fprintf(os.Stderr, "peers: bad -filter: %v\n", err)
		os.Exit(2)
	}
	reps, targetNs = 31, 50e6
	if *quickFlag {
		reps, targetNs = 11, 10e6
	}
	if *repsFlag > 0 {
		reps = *repsFlag
	}
	ncpu = runtime.NumCPU()
	wakeGapNs = int64(*wakeGapFlag)
	accel := *accelFlag
	if accel == "" {
		accel = guessAccel()
	}
	fmt.Fprintf(out, "CONFIG impl=go cores=%d gomaxprocs=%d accel=%s cpu=%q go=%s quick=%d reps=%d\n",
		ncpu, runtime.GOMAXPROCS(0), accel, cpuModel(), runtime.Version(), b2i(*quickFlag), reps)
	out.Flush()
	for _, b := range benches {
		if !filterRE.MatchString(b.name) {
			continue
		}
		if ncpu < b.minCPUs {
			fmt.Fprintf(out, "SKIP %s impl=go reason=needs_%d_cores\n", b.name, b.minCPUs)
			out.Flush()
			continue
		}
		runtime.GOMAXPROCS(ncpu)
		runtime.GC()
		b.run(b.name)
		out.Flush()
	}
	runtime.GOMAXPROCS(ncpu)
	fmt.Fprintln(out, "DONE impl=go")
	out.Flush()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "model name") {
			if i := strings.Index(line, ":"); i >= 0 {
				return strings.TrimSpace(line[i+1:])
			}
		}
	}
	return "unknown"
}

// guessAccel labels the run when the caller did not: QEMU's TCG names its
// CPU models "QEMU TCG CPU" (-cpu max takes the host's name under KVM only).
func guessAccel() string {
	if strings.Contains(cpuModel(), "QEMU TCG") {
		return "tcg"
	}
	return "native"
}

// ---- statistics

type stats struct{ min, p10, p50, p90, p99, max, mean float64 }

func summarize(xs []float64) stats {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	q := func(p float64) float64 {
		// nearest rank: the value at or below which p of the samples fall
		i := int(p*float64(len(s))+0.999999) - 1
		if i < 0 {
			i = 0
		}
		if i >= len(s) {
			i = len(s) - 1
		}
		return s[i]
	}
	var sum float64
	for _, x := range s {
		sum += x
	}
	return stats{s[0], q(0.10), q(0.50), q(0.90), q(0.99), s[len(s)-1], sum / float64(len(s))}
}

// perOp formats a per-repetition quantity (one value per rep) as the
// median and its spread: key=, key_min=, key_p10=, key_p90=, key_max=.
func perOp(key string, xs []float64) string {
	s := summarize(xs)
	return fmt.Sprintf("%s=%.1f %s_min=%.1f %s_p10=%.1f %s_p90=%.1f %s_max=%.1f",
		key, s.p50, key, s.min, key, s.p10, key, s.p90, key, s.max)
}

// latency formats per-sample latencies given in ns, in microseconds.
func latency(ns []float64) string {
	s := summarize(ns)
	return fmt.Sprintf("samples=%d min_us=%.2f p50_us=%.2f p90_us=%.2f p99_us=%.2f max_us=%.2f mean_us=%.2f",
		len(ns), s.min/1e3, s.p50/1e3, s.p90/1e3, s.p99/1e3, s.max/1e3, s.mean/1e3)
}

func emit(name string, kv string) {
	fmt.Fprintf(out, "BENCH %s impl=go %s\n", name, kv)
	out.Flush()
}

// calibrate finds a fixed n for which run(n) takes at least targetNs, so
// every repetition then does exactly the same work.
func calibrate(run func(n int) int64, n int) int {
	run(n) // first touches (stacks, page faults) would skew n
	for {
		d := run(n)
		if d >= targetNs || n >= 1<<30 {
			return n
		}
		grow := 2.0
		if d > 0 {
			grow = 1.2 * float64(targetNs) / float64(d)
		}
		if grow > 100 {
			grow = 100
		}
		if grow < 1.5 {
			grow = 1.5
		}
		n = int(float64(n) * grow)
	}
}

// measure runs the calibrated n reps times and reports ns per operation,
// where run(n) performs n operations and returns its elapsed ns.
func measure(name string, procs int, extra string, run func(n int) int64, n0 int) {
	runtime.GOMAXPROCS(procs)
	n := calibrate(run, n0)
	per := make([]float64, reps)
	for i := range per {
		per[i] = float64(run(n)) / float64(n)
	}
	if extra != "" {
		extra = " " + extra
	}
	emit(name, fmt.Sprintf("procs=%d n=%d reps=%d %s%s", procs, n, reps, perOp("ns_per_op", per), extra))
}

// ---- scheduler

// An op is one switch: each of the two goroutines calls Gosched n/2 times.
func benchYieldSwitch(name string) {
	measure(name, 1, "op=switch", func(n int) int64 {
		var wg sync.WaitGroup
		wg.Add(2)
		half := n / 2
		t0 := nanotime()
		for k := 0; k < 2; k++ {
			go func() {
				for i := 0; i < half; i++ {
					runtime.Gosched()
				}
				wg.Done()
			}()
		}
		wg.Wait()
		return nanotime() - t0
	}, 1000)
}

// spawnBatch goroutines are started and then waited for, so that dead Gs
// are reused from the free lists as they are in a long-running program.
const spawnBatch = 100

func benchSpawnExit(name string) {
	measure(name, 1, fmt.Sprintf("op=spawn_run_exit batch=%d", spawnBatch), func(n int) int64 {
		n = (n + spawnBatch - 1) / spawnBatch * spawnBatch
		var wg sync.WaitGroup
		t0 := nanotime()
		for i := 0; i < n; i += spawnBatch {
			wg.Add(spawnBatch)
			for j := 0; j < spawnBatch; j++ {
				go func() { wg.Done() }()
			}
			wg.Wait()
		}
		return nanotime() - t0
	}, spawnBatch*10)
}

//go:noinline
func fibSerial(n int) int {
	if n < 2 {
		return n
	}
	return fibSerial(n-1) + fibSerial(n-2)
}

// fibSpawn spawns a goroutine for fib(n-1) at every node above cutoff and
// computes fib(n-2) itself.
func fibSpawn(n, cutoff int) int {
	if n <= cutoff {
		return fibSerial(n)
	}
	ch := make(chan int, 1)
	go func() { ch <- fibSpawn(n-1, cutoff) }()
	b := fibSpawn(n-2, cutoff)
	return <-ch + b
}

func benchSpawnTreeFib(name string) {
	fibN, cutoff := 32, 15
	if *quickFlag {
		fibN = 30
	}
	want := fibSerial(fibN)
	var base float64
	for procs := 1; procs <= ncpu; procs++ {
		runtime.GOMAXPROCS(procs)
		ms := make([]float64, reps)
		for i := range ms {
			t0 := nanotime()
			if got := fibSpawn(fibN, cutoff); got != want {
				panic("fibSpawn: wrong result")
			}
			ms[i] = float64(nanotime()-t0) / 1e6
		}
		s := summarize(ms)
		if procs == 1 {
			base = s.p50
		}
		emit(name, fmt.Sprintf("procs=%d fib=%d cutoff=%d reps=%d %s speedup=%.3f speedup_min=%.3f speedup_max=%.3f",
			procs, fibN, cutoff, reps, perOp("ms", ms), base/s.p50, base/s.max, base/s.min))
	}
}

// Uneven work: task i spins for units(i) work units; a unit is 256 rounds
// of xorshift64. The distribution is fixed so goro's suite can repeat it:
// 1..64 units from an LCG, and every 97th task 20 times heavier.
const unevenTasks = 1000

func units(i int) int {
	u := int((uint32(i)*1103515245+12345)>>16)%64 + 1
	if i%97 == 0 {
		u *= 20
	}
	return u
}

var sink uint64

func work(units int) {
	x := uint64(88172645463325252)
	for r := 0; r < units*256; r++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	atomic.AddUint64(&sink, x)
}

func benchUnevenWork(name string) {
	procs := ncpu
	runtime.GOMAXPROCS(procs)
	total, longest := 0.0, 0.0
	for k := 0; k < 3; k++ { // the fastest of three serial passes is the ideal's base
		var sum, mx float64
		for i := 0; i < unevenTasks; i++ {
			t0 := nanotime()
			work(units(i))
			d := float64(nanotime() - t0)
			sum += d
			if d > mx {
				mx = d
			}
		}
		if k == 0 || sum < total {
			total, longest = sum, mx
		}
	}
	ideal := total / float64(procs)
	if longest > ideal {
		ideal = longest
	}
	ms := make([]float64, reps)
	ratio := make([]float64, reps)
	for r := range ms {
		var wg sync.WaitGroup
		wg.Add(unevenTasks)
		t0 := nanotime()
		for i := 0; i < unevenTasks; i++ {
			go func(u int) { work(u); wg.Done() }(units(i))
		}
		wg.Wait()
		d := float64(nanotime() - t0)
		ms[r] = d / 1e6
		ratio[r] = d / ideal
	}
	s := summarize(ratio)
	emit(name, fmt.Sprintf("procs=%d tasks=%d reps=%d %s ideal_ms=%.3f ratio=%.3f ratio_min=%.3f ratio_max=%.3f",
		procs, unevenTasks, reps, perOp("makespan_ms", ms), ideal/1e6, s.p50, s.min, s.max))
}

// Cross-P wake-up: the waker sends on a channel to a goroutine parked in a
// receive and keeps its own P busy until the receiver reports the time it
// ran, so the receiver must run on the other P. Between samples the waker
// spins for wakeGapNs, long enough for the other P's M to stop spinning
// and sleep, so each sample is a wake-up of an idle core.
//
// Go readies the receiver into the waker's runnext slot, which a thief may
// take only after a backoff (runqgrab's usleep(3)); mode=runnext measures
// that path. mode=runq then readies a decoy goroutine right after, which
// pushes the receiver into the waker's run queue, so that the sample is
// the plain wake-and-steal path that goro's scheduler also has.
var wakeGapNs int64

func benchWakeLatency(name string) {
	runtime.GOMAXPROCS(2)
	samples := 1000
	if *quickFlag {
		samples = 200
	}
	for _, mode := range []string{"runnext", "runq"} {
		ch, decoy := make(chan struct{}), make(chan struct{})
		var seen int64
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			for range ch {
				atomic.StoreInt64(&seen, nanotime())
			}
			wg.Done()
		}()
		go func() {
			for range decoy {
			}
			wg.Done()
		}()
		lat := make([]float64, 0, samples)
		for i := 0; i < samples+10; i++ {
			for t := nanotime() + wakeGapNs; nanotime() < t; {
			}
			atomic.StoreInt64(&seen, 0)
			t0 := nanotime()
			ch <- struct{}{}
			if mode == "runq" {
				decoy <- struct{}{}
			}
			var t1 int64
			for t1 = atomic.LoadInt64(&seen); t1 == 0; t1 = atomic.LoadInt64(&seen) {
			}
			if i >= 10 { // the first few warm the path
				lat = append(lat, float64(t1-t0))
			}
		}
		close(ch)
		close(decoy)
		wg.Wait()
		emit(name, fmt.Sprintf("procs=2 mode=%s gap_us=%d %s", mode, int(wakeGapNs/1000), latency(lat)))
	}
}

// ---- timers

func benchSleepLateness(name string, d time.Duration) {
	samples := 500
	if *quickFlag {
		samples = 100
	}
	if d < 100*time.Microsecond {
		samples *= 2
	}
	procs := ncpu
	runtime.GOMAXPROCS(procs)
	for i := 0; i < 3; i++ {
		time.Sleep(d)
	}
	lat := make([]float64, samples)
	for i := range lat {
		t0 := nanotime()
		time.Sleep(d)
		lat[i] = float64(nanotime() - t0 - int64(d))
	}
	emit(name, fmt.Sprintf("procs=%d sleep_us=%g %s", procs, float64(d)/1e3, latency(lat)))
}

// A 1 ms ticker beside one CPU hog per P (loops with no calls, which only
// asynchronous preemption can interrupt). Lateness is the receive time
// minus the time the received tick was due. Ticks are due on multiples of
// the period from the ticker's start, and a ticker that fell behind skips
// to the first multiple after it fired (Go's re-arm rule), so the tick
// after one that fired at F is due at the first multiple after F, or, if
// it fired earlier than that (the runtime re-armed from an older clock
// reading), at the last multiple at or before its own firing time, since
// no tick fires before it is due. A late tick is thus not counted again
// against every tick it made the ticker skip.
func benchTickerHogs(name string) {
	procs := ncpu
	runtime.GOMAXPROCS(procs)
	ticks := 1000
	if *quickFlag {
		ticks = 200
	}
	const period = time.Millisecond
	var stop int32
	var hogs sync.WaitGroup
	var hogWork uint64
	hogs.Add(procs)
	for i := 0; i < procs; i++ {
		go func() {
			var x uint64
			for atomic.LoadInt32(&stop) == 0 {
				x++
			}
			atomic.AddUint64(&hogWork, x)
			hogs.Done()
		}()
	}
	time.Sleep(5 * time.Millisecond)
	start := time.Now() // before the ticker's own start: grid points are never later than its
	tk := time.NewTicker(period)
	next := period // due offset of the next tick if it fires on time
	lat := make([]float64, ticks)
	for i := range lat {
		fired := <-tk.C
		received := time.Since(start)
		f := fired.Sub(start)
		due := next
		if floor := f / period * period; floor < due {
			due = floor
		}
		lat[i] = float64(received - due)
		next = (f/period + 1) * period
	}
	tk.Stop()
	atomic.StoreInt32(&stop, 1)
	hogs.Wait()
	emit(name, fmt.Sprintf("procs=%d hogs=%d period_us=%d %s", procs, procs, period/time.Microsecond, latency(lat)))
}

// ---- channels

// After Go's BenchmarkChanSync: two goroutines exchange on one unbuffered
// channel, one receiving then sending, the other sending then receiving.
// An op is one goroutine's send+receive pair, i.e. one hand-off.
func benchChanSync(name string) {
	measure(name, ncpu, "op=handoff", func(n int) int64 {
		half := n / 2
		c := make(chan int)
		var wg sync.WaitGroup
		wg.Add(2)
		t0 := nanotime()
		go func() {
			for i := 0; i < half; i++ {
				<-c
				c <- 0
			}
			wg.Done()
		}()
		go func() {
			for i := 0; i < half; i++ {
				c <- 0
				<-c
			}
			wg.Done()
		}()
		wg.Wait()
		return nanotime() - t0
	}, 1000)
}

// An op is one round trip: ping over one unbuffered channel, pong back
// over another.
func benchPingPong(name string, procs int) {
	measure(name, procs, "op=roundtrip", func(n int) int64 {
		ping, pong := make(chan int), make(chan int)
		go func() {
			for v := range ping {
				pong <- v
			}
		}()
		t0 := nanotime()
		for i := 0; i < n; i++ {
			ping <- i
			<-pong
		}
		d := nanotime() - t0
		close(ping)
		return d
	}, 1000)
}

const bufferedCap = 128

// An op is one item through a buffered channel from a producer goroutine
// to a consumer goroutine.
func benchChanBuffered(name string) {
	measure(name, ncpu, fmt.Sprintf("op=item cap=%d", bufferedCap), func(n int) int64 {
		c := make(chan int, bufferedCap)
		done := make(chan int)
		t0 := nanotime()
		go func() {
			s := 0
			for v := range c {
				s += v
			}
			done <- s
		}()
		for i := 0; i < n; i++ {
			c <- i
		}
		close(c)
		<-done
		return nanotime() - t0
	}, 10000)
}

// After Go's BenchmarkSelectUncontended, on one goroutine: two buffered
// channels of capacity 1 pass a token back and forth; an op is one select.
func benchSelectUncontended(name string) {
	measure(name, 1, "op=select", func(n int) int64 {
		c1, c2 := make(chan int, 1), make(chan int, 1)
		c1 <- 0
		t0 := nanotime()
		for i := 0; i < n; i++ {
			select {
			case <-c1:
				c2 <- 0
			case <-c2:
				c1 <- 0
			}
		}
		return nanotime() - t0
	}, 10000)
}

// ---- sync

func benchMutexUncontended(name string) {
	measure(name, 1, "op=lock_unlock", func(n int) int64 {
		var mu sync.Mutex
		t0 := nanotime()
		for i := 0; i < n; i++ {
			mu.Lock()
			mu.Unlock()
		}
		return nanotime() - t0
	}, 100000)
}

const mutexWorkers = 4

// mutexWorkers goroutines on all Ps take turns on one mutex guarding a
// counter; an op is one lock+unlock by any of them.
func benchMutexContended(name string) {
	measure(name, ncpu, fmt.Sprintf("op=lock_unlock goroutines=%d", mutexWorkers), func(n int) int64 {
		var mu sync.Mutex
		var wg sync.WaitGroup
		counter := 0
		per := n / mutexWorkers
		wg.Add(mutexWorkers)
		t0 := nanotime()
		for w := 0; w < mutexWorkers; w++ {
			go func() {
				for i := 0; i < per; i++ {
					mu.Lock()
					counter++
					mu.Unlock()
				}
				wg.Done()
			}()
		}
		wg.Wait()
		d := nanotime() - t0
		if counter != per*mutexWorkers {
			panic("mutex_contended: lost update")
		}
		return d
	}, 10000)
}

// ---- memory

// Bytes per parked goroutine: the growth of stack and heap in use (and of
// memory obtained from the OS) while 100k goroutines sit in a channel
// receive, divided by their number.
func benchParkedGBytes(name string) {
	const n = 100000
	runtime.GOMAXPROCS(ncpu)
	var before, after runtime.MemStats
	block := make(chan struct{})
	var started, exited sync.WaitGroup
	runtime.GC()
	runtime.ReadMemStats(&before)
	started.Add(n)
	exited.Add(n)
	for i := 0; i < n; i++ {
		go func() {
			started.Done()
			<-block
			exited.Done()
		}()
	}
	started.Wait()
	// Done comes just before the receive: a short sleep lets every
	// goroutine reach it and park.
	time.Sleep(20 * time.Millisecond)
	runtime.ReadMemStats(&after)
	close(block)
	exited.Wait()
	stack := float64(after.StackInuse-before.StackInuse) / n
	heap := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
	sys := float64(after.Sys-before.Sys) / n
	emit(name, fmt.Sprintf("procs=%d goroutines=%d bytes_per_g=%.0f stack_bytes_per_g=%.0f heap_bytes_per_g=%.0f sys_bytes_per_g=%.0f",
		ncpu, n, stack+heap, stack, heap, sys))
}
