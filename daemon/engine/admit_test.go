package engine

import (
	"context"
	"testing"
)

// BenchmarkAdmit is the admission's cost on every Submit: porep-synth's
// own counts (cached probes) and the budget checks.
func BenchmarkAdmit(b *testing.B) {
	e := newEngine(b, Config{HostBudget: 1 << 40, HostTotal: 1 << 40}, newFake(b, "fake0"))
	for _, size := range []uint64{1 << 16, 1 << 27} {
		c := porep(b, size)
		b.Run(c.Key, func(b *testing.B) {
			for b.Loop() {
				if _, err := e.Admit(context.Background(), c, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
