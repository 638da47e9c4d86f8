// SPDX-License-Identifier: MIT

// Package knownwork is the yardstick of the instruction counts: a
// b.RunParallel benchmark whose op is a loop of exactly 2*Rounds
// instructions (spin, in assembly), so that instructions per op, counted
// the way tools/bench/gobench.py counts Go's benchmarks, must read 2*Rounds
// plus the few of pb.Next and the call at every GOMAXPROCS. goro's twin is
// BenchmarkKnownWork in apps/gobench_goro.c, with the same Rounds.
package knownwork

import "testing"

// Rounds of DECQ+JNZ per op.
const Rounds = 5000

// spin runs n rounds of DECQ+JNZ (spin_amd64.s).
func spin(n int64)

func BenchmarkKnownWork(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			spin(Rounds)
		}
	})
}
