package groth16

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/parallel"
)

// Prove assembles its scalar vectors (wires, the L‖H scalars, the wires of
// A and B without the infinity columns) from vectors of millions of
// elements. Copied on one core these copies were a fifth of a GPU proof at
// 2^20 (docs/perf.md), so they run on all cores (gnark-crypto's
// parallel.Execute) over blocks of vecBlock elements: below that a goroutine
// costs more than it saves.
const vecBlock = 1 << 15

// blockRange returns the element range of block b of a vector of n.
func blockRange(b, n int) (lo, hi int) { return b * vecBlock, min((b+1)*vecBlock, n) }

func numBlocks(n int) int { return (n + vecBlock - 1) / vecBlock }

// copyAll copies src into dst (len(dst) ≥ len(src)) on all cores.
func copyAll(dst, src []fr.Element) {
	parallel.Execute(numBlocks(len(src)), func(b0, b1 int) {
		lo, _ := blockRange(b0, len(src))
		_, hi := blockRange(b1-1, len(src))
		copy(dst[lo:hi], src[lo:hi])
	})
}

// compact returns the elements of v whose mask entry is false, in order.
// When every entry is kept it returns v itself, not a copy.
func compact(v []fr.Element, mask []bool) []fr.Element {
	var store []fr.Element
	return compactInto(v, mask, &store)
}

// compactInto is compact writing its copy into *store, which it grows when
// shorter (see grow).
func compactInto(v []fr.Element, mask []bool, store *[]fr.Element) []fr.Element {
	// Two passes over the blocks: count each block's kept entries, then copy
	// each block to its offset.
	nb := numBlocks(len(v))
	offs := make([]int, nb+1)
	parallel.Execute(nb, func(b0, b1 int) {
		for b := b0; b < b1; b++ {
			lo, hi := blockRange(b, len(v))
			for _, skip := range mask[lo:hi] {
				if !skip {
					offs[b+1]++
				}
			}
		}
	})
	for b := range nb {
		offs[b+1] += offs[b]
	}
	if offs[nb] == len(v) {
		return v
	}
	out := grow(store, offs[nb])
	parallel.Execute(nb, func(b0, b1 int) {
		for b := b0; b < b1; b++ {
			lo, hi := blockRange(b, len(v))
			j := offs[b]
			for i := lo; i < hi; i++ {
				if !mask[i] {
					out[j] = v[i]
					j++
				}
			}
		}
	})
	return out
}

// grow returns (*s)[:n], first replacing *s by a fresh slice when its
// capacity is below n. The elements are not cleared.
func grow(s *[]fr.Element, n int) []fr.Element {
	if cap(*s) < n {
		*s = make([]fr.Element, n)
	}
	return (*s)[:n]
}
