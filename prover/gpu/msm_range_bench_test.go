package gpu

import (
	"fmt"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// BenchmarkReduceRangePoRep prints, for a porep-synth witness (about 90 %
// bits, like a C2 partition's), which segments a chunk's reduce levels run
// over: the range reducedRange chooses from the band maxima, against the
// segments of the bands that need levels at all, with the limit bucket_sum
// needs (most = msmBucketPartials) and the one bucket_fold needs
// (msmFoldPartials, what a chunked MSM's chunks use); "kept ≤" is the
// longest band the levels skip, in partials. It runs on the CPU; the
// counts mirror msm_digits (msm_sort.cuh, encode_digit in msm_scalar.cuh).
//
//	go test ./prover/gpu -run '^$' -bench ReduceRangePoRep -benchtime 1x
func BenchmarkReduceRangePoRep(b *testing.B) {
	c, err := porep.New(1<<20, 1)
	if err != nil {
		b.Fatal(err)
	}
	a, err := r1cs.Solve(c)
	if err != nil {
		b.Fatal(err)
	}
	wires := append(append([]fr.Element{}, a.Public...), a.Private...)
	bits := 0
	for i := range wires {
		if wires[i].IsZero() || wires[i].IsOne() {
			bits++
		}
	}
	fmt.Printf("porep-synth 2^20 (seed 1): %d wires, %.1f %% of them 0 or 1\n", len(wires), 100*float64(bits)/float64(len(wires)))
	fmt.Printf("%-22s %4s %3s %5s %8s %6s %11s %15s %14s %9s\n", "chunk", "most", "c", "t1", "segments", "bands", "long bands",
		"range (share)", "in long bands", "kept ≤")
	for range b.N {
		for _, ch := range []struct {
			name   string
			lo, hi int
		}{{"whole witness", 0, len(wires)}, {"first 2^18 (labels)", 0, 1 << 18}, {"last 2^18", len(wires) - 1<<18, len(wires)}} {
			ws := wires[ch.lo:ch.hi]
			p, err := newMSMPlan(len(ws), 50688) // the H100's and H200's G1 wave
			if err != nil {
				b.Fatal(err)
			}
			maxima := make([]uint32, p.bands())
			for s, n := range hostDigitCounts(p, ws) {
				maxima[uint32(s)/p.band] = max(maxima[uint32(s)/p.band], n)
			}
			for _, most := range []uint32{msmBucketPartials, msmFoldPartials} {
				s0, s1, _ := p.reducedRange(maxima, most)
				long, longest := 0, uint32(0)
				for _, m := range maxima {
					l := ceilDiv32(m, p.t1)
					if l > most {
						long++
					} else {
						longest = max(longest, l)
					}
				}
				fmt.Printf("%-22s %4d %3d %5d %8d %6d %11d %8d (%4.1f %%) %8d (%4.1f %%) %9d\n", ch.name, most, p.c, p.t1, p.nseg,
					p.bands(), long, s1-s0, 100*float64(s1-s0)/float64(p.nseg), uint32(long)*p.band,
					100*float64(uint32(long)*p.band)/float64(p.nseg), longest)
			}
		}
	}
}

// hostDigitCounts mirrors msm_digits: each segment's entry count for plan
// p (no table: bucket window w is digit window w).
func hostDigitCounts(p msmPlan, scalars []fr.Element) []uint32 {
	counts := make([]uint32, p.nseg)
	for i := range scalars {
		reg := scalars[i].Bits() // standard form, little-endian 64-bit limbs
		var limbs [8]uint32
		for j := range 4 {
			limbs[2*j], limbs[2*j+1] = uint32(reg[j]), uint32(reg[j]>>32)
		}
		carry, half := uint32(0), uint32(1)<<(p.c-1)
		for w := range p.nwin {
			lo, sh := w*p.c/32, w*p.c%32
			v := limbs[lo] >> sh
			if sh != 0 && lo+1 < 8 {
				v |= limbs[lo+1] << (32 - sh)
			}
			d := v&(1<<p.c-1) + carry
			mag := d
			carry = 0
			if d > half {
				carry, mag = 1, 1<<p.c-d
			}
			if mag != 0 {
				counts[(w%p.mwin)*p.nb+mag-1]++
			}
		}
	}
	return counts
}
