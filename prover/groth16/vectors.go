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

// kept holds, for each block of a mask and one past the last, the number of
// entries kept (mask false) before the block: the offsets at which a
// compaction writes each block.
type kept []int

// countKept counts the kept entries of mask per block, on all cores.
func countKept(mask []bool) kept {
	nb := numBlocks(len(mask))
	offs := make(kept, nb+1)
	parallel.Execute(nb, func(b0, b1 int) {
		for b := b0; b < b1; b++ {
			lo, hi := blockRange(b, len(mask))
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
	return offs
}

// n is the number of kept entries.
func (k kept) n() int { return k[len(k)-1] }

// copy writes the kept elements of v into out (len(out) ≥ k.n()), each
// block to its offset, on all cores, and returns out[:k.n()].
func (k kept) copy(out, v []fr.Element, mask []bool) []fr.Element {
	parallel.Execute(len(k)-1, func(b0, b1 int) {
		for b := b0; b < b1; b++ {
			lo, hi := blockRange(b, len(v))
			j := k[b]
			for i := lo; i < hi; i++ {
				if !mask[i] {
					out[j] = v[i]
					j++
				}
			}
		}
	})
	return out[:k.n()]
}
