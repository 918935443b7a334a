package groth16

import (
	"runtime"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Prove assembles its scalar vectors (wires, the L‖H scalars, the wires of
// A and B without the infinity columns) from vectors of millions of
// elements. Copied on one core these copies were a fifth of a GPU proof at
// 2^20 (docs/perf.md), so they run on all cores, in chunks of at least
// vecChunk elements (below that a goroutine costs more than it saves).
const vecChunk = 1 << 15

// forChunks calls f(lo, hi) for consecutive chunks of [0, n), concurrently
// on up to GOMAXPROCS goroutines, and returns when all have returned.
func forChunks(n int, f func(lo, hi int)) {
	parts := min(runtime.GOMAXPROCS(0), max(1, n/vecChunk))
	if parts == 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := n*p/parts, n*(p+1)/parts
		wg.Go(func() { f(lo, hi) })
	}
	wg.Wait()
}

// copyAll copies src into dst (len(dst) ≥ len(src)) on all cores.
func copyAll(dst, src []fr.Element) {
	forChunks(len(src), func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
}

// compact returns the elements of v whose mask entry is false, in order.
// When every entry is kept it returns v itself, not a copy.
func compact(v []fr.Element, mask []bool) []fr.Element {
	// Two passes over the same chunks: count the kept entries of each
	// chunk, then copy each chunk to its offset.
	parts := min(runtime.GOMAXPROCS(0), max(1, len(v)/vecChunk))
	bounds := func(p int) (int, int) { return len(v) * p / parts, len(v) * (p + 1) / parts }
	offs := make([]int, parts+1)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := bounds(p)
		wg.Go(func() {
			c := 0
			for _, skip := range mask[lo:hi] {
				if !skip {
					c++
				}
			}
			offs[p+1] = c
		})
	}
	wg.Wait()
	for p := range parts {
		offs[p+1] += offs[p]
	}
	if offs[parts] == len(v) {
		return v
	}
	out := make([]fr.Element, offs[parts])
	for p := range parts {
		lo, hi := bounds(p)
		wg.Go(func() {
			j := offs[p]
			for i := lo; i < hi; i++ {
				if !mask[i] {
					out[j] = v[i]
					j++
				}
			}
		})
	}
	wg.Wait()
	return out
}
