// SPDX-License-Identifier: MIT

// schedlat: Go's own scheduling latency (runtime/metrics'
// /sched/latencies:seconds) on the workloads of goro's app=schedlat
// (apps/schedlat.c), with the same parameters, read before and after each:
//
//	pool      the worker-pool demo's shape, pools times: items jobs in a
//	          buffered channel, GOMAXPROCS workers ranging over it, a WaitGroup
//	pingpong  two goroutines, rounds round trips over two unbuffered channels
//	yield     yielders goroutines, each calling runtime.Gosched yields times
//
// Prints per workload, all reps together, the line app=schedlat prints:
//
//	BENCH schedlat_NAME impl=go procs=P reps=R count=C p50_us=X p99_us=Y
//
// Go 1.19 records the latency of one transition to running in
// gTrackingPeriod (8) per goroutine, so count is about an eighth of the
// schedules; Go's histogram has no sum, so no mean. Quantiles interpolate
// linearly inside the bucket that holds them, as app=schedlat does.
// tools/bench/schedlat.py runs it in tools/bench/bench.py's Linux guest.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
)

// The parameters of both sides: keep apps/schedlat.c's in step.
const (
	items    = 1000
	pools    = 20
	rounds   = 5000
	yielders = 100
	yields   = 100
)

func runPool() {
	for k := 0; k < pools; k++ {
		jobs := make(chan int, items)
		var wg sync.WaitGroup
		var sum uint64
		n := runtime.GOMAXPROCS(0)
		wg.Add(items + n)
		for w := 0; w < n; w++ {
			go func() {
				for j := range jobs {
					atomic.AddUint64(&sum, uint64(j)*uint64(j))
					wg.Done()
				}
				wg.Done()
			}()
		}
		for i := 0; i < items; i++ {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
	}
}

func runPingPong() {
	ping, pong := make(chan int), make(chan int)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		for i := 0; i < rounds; i++ {
			pong <- <-ping
		}
		wg.Done()
	}()
	go func() {
		for i := 0; i < rounds; i++ {
			ping <- i
			<-pong
		}
		wg.Done()
	}()
	wg.Wait()
}

func runYield() {
	var wg sync.WaitGroup
	wg.Add(yielders)
	for i := 0; i < yielders; i++ {
		go func() {
			for j := 0; j < yields; j++ {
				runtime.Gosched()
			}
			wg.Done()
		}()
	}
	wg.Wait()
}

const latencies = "/sched/latencies:seconds"

func read() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: latencies}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		fmt.Println("schedlat: no", latencies, "in this Go")
		os.Exit(1)
	}
	return s[0].Value.Float64Histogram()
}

// quantile returns the q-quantile (0..1) in seconds: linear inside the
// bucket that holds it; an infinite bound stands for the finite one.
func quantile(buckets []float64, counts []uint64, total uint64, q float64) float64 {
	want, seen := q*float64(total), 0.0
	for i, c := range counts {
		n := float64(c)
		if n == 0 || seen+n < want {
			seen += n
			continue
		}
		lo, hi := buckets[i], buckets[i+1]
		if math.IsInf(lo, -1) {
			lo = 0
		}
		if math.IsInf(hi, 1) {
			return lo
		}
		return lo + (hi-lo)*(want-seen)/n
	}
	return 0
}

func measure(name string, reps int, run func()) {
	before := read()
	for r := 0; r < reps; r++ {
		run()
	}
	after := read()
	counts := make([]uint64, len(after.Counts))
	var total uint64
	for i := range counts {
		counts[i] = after.Counts[i] - before.Counts[i]
		total += counts[i]
	}
	fmt.Printf("BENCH schedlat_%s impl=go procs=%d reps=%d count=%d p50_us=%.2f p99_us=%.2f\n",
		name, runtime.GOMAXPROCS(0), reps, total,
		quantile(after.Buckets, counts, total, 0.5)*1e6, quantile(after.Buckets, counts, total, 0.99)*1e6)
}

func main() {
	filter := flag.String("filter", "", "substring selecting workloads by name")
	reps := flag.Int("reps", 3, "repetitions of each workload in its window")
	flag.Parse()
	workloads := []struct {
		name string
		run  func()
	}{{"pool", runPool}, {"pingpong", runPingPong}, {"yield", runYield}}
	for _, w := range workloads {
		if strings.Contains(w.name, *filter) {
			measure(w.name, *reps, w.run)
		}
	}
	fmt.Println("schedlat: ok")
}
