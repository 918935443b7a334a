package gpu

import (
	"fmt"
	"math/bits"
)

// The NTT kernels (cuda/kernels/ntt.cu) run a transform of size n = 2^L as a
// few global passes. A pass owns k consecutive butterfly bits [lo, lo+k) of
// the element index: a "group" is the 2^k elements that differ only in those
// bits, and all k radix-2 stages on a group run in shared memory. A thread
// block loads blockElems elements = 2^logG groups into shared memory, so one
// pass reads and writes every element once.
//
// Layout of a block's shared memory (element e in [0, 2^(k+logG))):
//
//	t  = (e >> sh) & (2^k − 1)              position inside the group
//	gl = (e & (2^sh − 1)) | (e >> (sh+k)) << sh   group inside the block
//	g  = block·2^logG + gl                 global group
//	addr = (g >> lo) << (lo+k) | t << lo | (g & (2^lo − 1))
//
// with sh = min(lo, logG). Consecutive e are consecutive global addresses for
// runs of 2^sh elements (the whole block when lo ≤ logG), so loads and stores
// are coalesced.
//
// Inside a pass the k stages run in chunks of at most 3 bits (ntt.cuh:
// chunk_bits): for a chunk each thread holds the 2^R ≤ 8 elements that differ
// in the chunk's bits in registers and runs the chunk's R stages there, so
// shared memory is read and written once per chunk, not once per stage. A
// block has one thread per regElems elements.
//
// Decimation in frequency (DIF) runs the bits from L−1 down to 0 and turns
// natural order into bit-reversed order; decimation in time (DIT) runs them
// from 0 up and turns bit-reversed order into natural order. The butterfly at
// absolute bit p pairs addr0 (bit p clear) with addr0 + 2^p and uses the
// twiddle ω^e, e = (addr0 mod 2^p)·2^(L−1−p), read from the per-size table
// W[i] = ω^i, i < n/2. Inverse transforms use ω^−e = −W[n/2 − e] (e > 0).

const (
	// logBlockElems is log2 of the elements one block holds in shared
	// memory: 2^10 elements of 32 bytes = 32 KiB, under the 48 KiB static
	// limit of every supported architecture.
	logBlockElems = 10
	// maxPassBits is the most butterfly bits one pass runs. At 9, a block
	// holds at least 2^(10−9) = 2 groups, so loads move runs of ≥ 64 bytes
	// (two sectors); against 8 (runs ≥ 128 bytes) it runs 2^25 … 2^27 in
	// three passes instead of four: NTT 2^27 40.3 → 36.4 ms on the H200,
	// sizes up to 2^24 unchanged (docs/perf-ntt.md, "Bit reversal in the
	// first pass").
	maxPassBits = 9
	// logRegElems is log2 of the elements a pass thread holds in registers
	// (ntt.cuh: kRegLog).
	logRegElems = 3
	// maxThreads is the block size of the pass kernels: one thread per
	// 2^logRegElems elements of a full block.
	maxThreads = 1 << (logBlockElems - logRegElems)
	// MaxLogN is the largest supported transform, log2: 2^27.
	MaxLogN = 27
)

// pass is one global pass of an NTT of size 2^logN.
type pass struct {
	lo, k, logG, sh uint32
}

// threads returns the block size for p: one thread per 2^logRegElems
// elements, at least one (blocks of 2 or 4 elements).
func (p pass) threads() uint32 {
	return uint32(1) << (max(p.k+p.logG, logRegElems) - logRegElems)
}

// blocks returns the grid size of p on 2^logN elements.
func (p pass) blocks(logN uint32) uint32 {
	return uint32(1) << (logN - p.k - p.logG)
}

// splitBits splits logN butterfly bits into the fewest passes of at most
// maxPassBits bits, as evenly as possible (larger passes first). A transform
// that fits one block runs as a single pass.
func splitBits(logN uint32) []uint32 {
	if logN <= logBlockElems {
		return []uint32{logN}
	}
	np := (logN + maxPassBits - 1) / maxPassBits
	ks := make([]uint32, np)
	for i := range ks {
		ks[i] = logN / np
		if uint32(i) < logN%np {
			ks[i]++
		}
	}
	return ks
}

// newPass returns the pass over bits [lo, lo+k) of a size-2^logN transform.
func newPass(logN, lo, k uint32) pass {
	logG := min(logBlockElems-k, logN-k)
	return pass{lo: lo, k: k, logG: logG, sh: min(lo, logG)}
}

// difPlan returns the DIF passes of a size-2^logN transform, in run order
// (highest bits first).
func difPlan(logN uint32) []pass {
	var ps []pass
	top := logN
	for _, k := range splitBits(logN) {
		top -= k
		ps = append(ps, newPass(logN, top, k))
	}
	return ps
}

// ditPlan returns the DIT passes of a size-2^logN transform, in run order
// (lowest bits first).
func ditPlan(logN uint32) []pass {
	var ps []pass
	lo := uint32(0)
	for _, k := range splitBits(logN) {
		ps = append(ps, newPass(logN, lo, k))
		lo += k
	}
	return ps
}

// logSize checks that n is a supported transform size and returns log2(n).
func logSize(n int) (uint32, error) {
	if n < 2 || n&(n-1) != 0 {
		return 0, fmt.Errorf("ntt size %d: not a power of two ≥ 2", n)
	}
	l := uint32(bits.TrailingZeros(uint(n)))
	if l > MaxLogN {
		return 0, fmt.Errorf("ntt size 2^%d: above the supported 2^%d", l, MaxLogN)
	}
	return l, nil
}

// splitLog returns s, the bit split of a scale table pair over 2^logN
// indices: factor(j) = lo[j mod 2^s]·hi[j >> s].
func splitLog(logN uint32) uint32 { return (logN + 1) / 2 }
