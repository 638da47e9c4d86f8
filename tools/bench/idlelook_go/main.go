// SPDX-License-Identifier: MIT

// Command idlelook-go is the Go peer of goro's app=bench_idle
// (apps/bench_idle.c): with every P but one idle, one goroutine sleeps n
// times, so each sleep leaves Go's scheduler with nothing to run until
// its timer. Markers 1 and 2 (mark_amd64.s) bracket the loop:
// tools/bench/idlelook.py runs it in the Linux guest under the insncount
// plugin and divides what every core executed between them by n: the
// instructions the machine (Go's runtime, and Linux's kernel beside it)
// spends on a sleep of the only busy goroutine, at GOMAXPROCS = the
// guest's vCPUs.
package main

import (
	"flag"
	"fmt"
	"runtime"
	"time"
)

// Markers 1 and 2 (mark_amd64.s).
func mark1()
func mark2()

func main() {
	n := flag.Int("n", 100, "sleeps")
	us := flag.Int("sleep_us", 500, "microseconds per sleep")
	flag.Parse()
	time.Sleep(10 * time.Millisecond) // the start's last wake-ups settle
	mark1()
	for i := 0; i < *n; i++ {
		time.Sleep(time.Duration(*us) * time.Microsecond)
	}
	mark2()
	fmt.Printf("IDLELOOK impl=go vcpus=%d gomaxprocs=%d reps=%d sleep_us=%d\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), *n, *us)
}
