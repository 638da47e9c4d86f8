// SPDX-License-Identifier: MIT

// Command latency-go is the Go peer of goro's app=latency (apps/latency.c):
// the same three workloads, parameters, random arrivals and output lines
// (see that file for what each measures). tools/bench/latbench.py builds it with
// Debian's golang at bench time and runs it in the Linux guest under the
// same QEMU TCG as goro. Go's time slice is its fixed 10 ms (sysmon's
// forcePreemptNS); it has no quantum to set.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var epoch = time.Now()

// nanotime: monotonic nanoseconds, as goro's.
func nanotime() uint64 { return uint64(time.Since(epoch)) }

// ---- samples

type samples struct {
	v []uint64
	n int64 // slots taken (atomic); may pass len(v): the rest dropped
}

func newSamples(cap int) *samples { return &samples{v: make([]uint64, cap)} }

func (s *samples) add(x uint64) {
	i := atomic.AddInt64(&s.n, 1) - 1
	if i < int64(len(s.v)) {
		s.v[i] = x
	}
}

func (s *samples) sorted() []uint64 {
	n := int(s.n)
	if n > len(s.v) {
		n = len(s.v)
	}
	v := s.v[:n]
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	return v
}

// rank: the nearest-rank percentile (per mille) of sorted v.
func rank(v []uint64, permille int) uint64 {
	k := (len(v)*permille + 999) / 1000
	if k == 0 {
		k = 1
	}
	return v[k-1]
}

func dist(s *samples) string {
	v := s.sorted()
	if len(v) == 0 {
		return " n=0"
	}
	return fmt.Sprintf(" n=%d p50_ns=%d p99_ns=%d p999_ns=%d max_ns=%d", len(v), rank(v, 500), rank(v, 990),
		rank(v, 999), v[len(v)-1])
}

// ---- work

// work computes for d ns of this goroutine's running time: gaps between
// clock reads longer than workGap were spent preempted and do not count.
const workGap = 5000

func work(d uint64) {
	var done uint64
	last := nanotime()
	for done < d {
		t := nanotime()
		if t-last < workGap {
			done += t - last
		}
		last = t
	}
}

var rngState uint64

// splitmix64, as goro's: both draw the same arrivals from one seed.
func rngNext() uint64 {
	rngState += 0x9e3779b97f4a7c15
	z := rngState
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func expDraw(mean float64) uint64 {
	u := float64((rngNext()>>11)+1) / 9007199254740992.0
	return uint64(-mean * math.Log(u))
}

// ---- wl=timers: golang/go#38860

var timerPeriods = []uint64{1000000, 10000000, 100000000}
var timerNames = []string{"1ms", "10ms", "100ms"}

const sleepersPerPeriod = 4

var spinSink uint64

func runTimers(ms uint64) {
	procs := runtime.GOMAXPROCS(0)
	late := make([]*samples, len(timerPeriods))
	skipped := make([]uint64, len(timerPeriods))
	for p := range timerPeriods {
		late[p] = newSamples(int(ms*1000000/timerPeriods[p]+2) * sleepersPerPeriod)
	}
	start := nanotime()
	end := start + ms*1000000
	var stop int32
	var wg sync.WaitGroup
	wg.Add(procs + len(timerPeriods)*sleepersPerPeriod)
	for i := 0; i < procs; i++ {
		go func() {
			x := uint64(1)
			for atomic.LoadInt32(&stop) == 0 {
				for i := 0; i < 1000; i++ {
					x = x*6364136223846793005 + 1
				}
			}
			atomic.AddUint64(&spinSink, x) // keeps the loop from being folded away
			wg.Done()
		}()
	}
	for p := range timerPeriods {
		for k := 0; k < sleepersPerPeriod; k++ {
			go func(p, k int) {
				period := timerPeriods[p]
				next := start + period*uint64(k+1)/sleepersPerPeriod
				for next < end {
					if now := nanotime(); next > now {
						time.Sleep(time.Duration(next - now))
					}
					t := nanotime()
					late[p].add(t - next)
					for next += period; next <= t; next += period {
						atomic.AddUint64(&skipped[p], 1)
					}
				}
				wg.Done()
			}(p, k)
		}
	}
	time.Sleep(time.Duration(end - start))
	for nanotime() < end+timerPeriods[len(timerPeriods)-1] {
		time.Sleep(time.Duration(timerPeriods[0]))
	}
	atomic.StoreInt32(&stop, 1)
	wg.Wait()
	for p := range timerPeriods {
		fmt.Printf("LAT impl=go wl=timers case=%s spinners=%d sleepers=%d%s skipped=%d\n", timerNames[p], procs,
			sleepersPerPeriod, dist(late[p]), skipped[p])
	}
}

// ---- wl=wakeup: schbench

const (
	messages    = 2
	workers     = 4
	wakeSleepNs = 1000000
	wakeWorkNs  = 50000
)

func runWakeup(ms uint64) {
	lat := newSamples(int(ms*1000000/wakeSleepNs+2) * messages * workers)
	end := nanotime() + ms*1000000
	var wg sync.WaitGroup
	wg.Add(messages * (workers + 1))
	for m := 0; m < messages; m++ {
		done := make(chan struct{}, workers)
		var wake [workers]chan uint64
		for w := range wake {
			wake[w] = make(chan uint64, 1)
			go func(c chan uint64) {
				for t0 := range c {
					if t0 == 0 {
						break
					}
					lat.add(nanotime() - t0)
					work(wakeWorkNs)
					done <- struct{}{}
				}
				wg.Done()
			}(wake[w])
		}
		go func() {
			for nanotime() < end {
				for w := range wake {
					wake[w] <- nanotime()
				}
				for range wake {
					<-done
				}
				time.Sleep(wakeSleepNs)
			}
			for w := range wake {
				wake[w] <- 0
			}
			wg.Done()
		}()
	}
	wg.Wait()
	fmt.Printf("LAT impl=go wl=wakeup case=m%dw%d messages=%d workers=%d work_ns=%d sleep_ns=%d%s\n", messages,
		workers, messages, workers, wakeWorkNs, wakeSleepNs, dist(lat))
}

// ---- wl=open: Skyloft's synthetic load

const (
	shortNs          = 4000
	longNs           = 10000000
	longPerMille     = 5
	dispatchSleepMin = 50000
)

func runOpen(ms uint64, loadPct int) {
	procs := runtime.GOMAXPROCS(0)
	meanService := (shortNs*(1000.0-longPerMille) + float64(longNs)*longPerMille) / 1000.0
	interarrival := meanService / (float64(procs) * float64(loadPct) / 100.0)
	expect := int(float64(ms)*1e6/interarrival*1.5) + 64
	shortLat, longLat := newSamples(expect), newSamples(expect/50+64)
	var wg sync.WaitGroup
	var lastDone uint64
	start := nanotime()
	end := start + ms*1000000
	next := start + expDraw(interarrival)
	var sent, longs uint64
	for next < end {
		now := nanotime()
		for ; next <= now && next < end; next += expDraw(interarrival) {
			isLong := rngNext()%1000 < longPerMille
			service := uint64(shortNs)
			if isLong {
				service = longNs
				longs++
			}
			wg.Add(1)
			go func(arrival, service uint64) {
				work(service)
				t := nanotime()
				for prev := atomic.LoadUint64(&lastDone); t > prev; prev = atomic.LoadUint64(&lastDone) {
					if atomic.CompareAndSwapUint64(&lastDone, prev, t) {
						break
					}
				}
				if service == shortNs {
					shortLat.add(t - arrival)
				} else {
					longLat.add(t - arrival)
				}
				wg.Done()
			}(next, service)
			sent++
		}
		if next >= end {
			break
		}
		if now = nanotime(); next > now+dispatchSleepMin {
			time.Sleep(time.Duration(next - now))
		} else {
			runtime.Gosched()
		}
	}
	wg.Wait()
	span := uint64(1)
	if lastDone > start {
		span = lastDone - start
	}
	line := fmt.Sprintf("LAT impl=go wl=open case=load%d offered_pct=%d rate_per_s=%d sent=%d long=%d achieved_per_s=%d%s",
		loadPct, loadPct, uint64(1e9/interarrival), sent, longs, sent*1000000000/span, dist(shortLat))
	if lv := longLat.sorted(); len(lv) > 0 {
		line += fmt.Sprintf(" long_p50_ns=%d long_max_ns=%d", rank(lv, 500), lv[len(lv)-1])
	}
	fmt.Println(line)
}

func main() {
	wl := flag.String("wl", "all", "a comma list of timers, wakeup, open, or all")
	ms := flag.Uint64("ms", 0, "milliseconds per case (default 2000; 1000 per load point)")
	loads := flag.String("loads", "10,30,50,70,80", "offered loads, percent of gomaxprocs / mean service")
	seed := flag.Uint64("seed", 1, "arrivals' seed")
	flag.Parse()
	var pcts []int
	for _, f := range strings.Split(*loads, ",") {
		v, err := strconv.Atoi(f)
		if err != nil || v <= 0 || v > 100 {
			fmt.Fprintf(os.Stderr, "latency-go: bad -loads %q\n", *loads)
			os.Exit(2)
		}
		pcts = append(pcts, v)
	}
	rngState = *seed
	want := map[string]bool{}
	for _, w := range strings.Split(*wl, ",") {
		switch w {
		case "all":
			want["timers"], want["wakeup"], want["open"] = true, true, true
		case "timers", "wakeup", "open":
			want[w] = true
		default:
			fmt.Fprintf(os.Stderr, "latency-go: bad -wl %q\n", *wl)
			os.Exit(2)
		}
	}
	fmt.Printf("LATCONFIG impl=go vcpus=%d gomaxprocs=%d quantum_ns=10000000 accel=tcg seed=%d goversion=%s\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), *seed, runtime.Version())
	dflt := func(d uint64) uint64 {
		if *ms != 0 {
			return *ms
		}
		return d
	}
	if want["timers"] {
		runTimers(dflt(2000))
	}
	if want["wakeup"] {
		runWakeup(dflt(2000))
	}
	if want["open"] {
		for _, p := range pcts {
			runOpen(dflt(1000), p)
		}
	}
	fmt.Println("LATDONE impl=go")
}
