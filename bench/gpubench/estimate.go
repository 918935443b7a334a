package gpubench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/cuzk-dev/cuzk/bench/benchinput"
	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/cuda/selftest"
	"github.com/cuzk-dev/cuzk/internal/stats"
)

// Modmul-bound estimates: count the field multiplications an algorithm
// performs and divide by the GPU's multiplication rate. They ignore memory
// traffic, sorting and launch gaps, so a kernel near its Estimate is limited
// by arithmetic.

// Field multiplications per curve operation, from the formulas the kernels
// use (cuda/include/cuzk/ec_xyzz.cuh, Explicit-Formulas Database):
// madd-2008-s is 8M + 2S, add-2008-s 12M + 2S (squarings counted as
// multiplications). A G2 coordinate is in Fp2, whose multiplication costs
// three Fp multiplications (Karatsuba). These are the textbook counts, kept
// as a fixed yardstick: the kernels do a little less work per operation
// (one reduction for y3's two products, lazily reduced Fp2 products; see
// docs/perf-msm.md, "Fewer reductions").
const (
	mulsPerMixedAdd = 10
	mulsPerAdd      = 14
	fp2Muls         = 3
)

// FallbackFrRate is the compute-bound Fr rate of an H200 (per second):
// cuzk's multiplication in two dependent chains per thread measured
// 59.8 Gmul/s (docs/perf.md, "Multiplier throughput"). It is used when the
// measurement is not possible.
const FallbackFrRate = 59.8e9

// FpPerFr scales the Fr rate to Fp: a Montgomery multiplication costs about
// limbs², and Fp has 12 32-bit limbs against Fr's 8.
const FpPerFr = (12.0 / 8.0) * (12.0 / 8.0)

// MulRate is the multiplication rate estimates use and where it came from.
type MulRate struct {
	Fr, Fp float64 // per second
	Source string
}

// MeasureMulRate runs the fr_mul_chain selftest kernel (one launch over n
// random elements, CUDA-event timed after a warm-up, every output compared
// with gnark-crypto) and derives the Fp rate from it. The kernel does 32
// dependent multiplications per element it moves, so its rate is the
// multiplier's; the elementwise fr_mul, which estimates used before, is
// memory-bound and gave rates about 1.6× too low.
func MeasureMulRate(ctx context.Context, dev *driver.Device, n int, seed uint64) (MulRate, error) {
	rep, err := selftest.Run(ctx, dev, rand.New(rand.NewPCG(seed, 0x6d756c)), n)
	if err != nil {
		return MulRate{}, fmt.Errorf("fr_mul_chain rate: %w", err)
	}
	for _, r := range rep.Results {
		if r.Kernel != "fr_mul_chain" {
			continue
		}
		if !r.Pass() {
			return MulRate{}, fmt.Errorf("fr_mul_chain rate: %w: %d mismatches (%s)", benchinput.ErrMismatch, r.Mismatches, r.Detail)
		}
		rate := r.MulsPerSecond()
		return MulRate{Fr: rate, Fp: rate / FpPerFr, Source: fmt.Sprintf(
			"measured: fr_mul_chain selftest kernel, %s elements × %d muls, %.1f Gmul/s; Fp = Fr/(12/8)^2",
			stats.FormatCount(n), r.MulsPerElement, rate/1e9)}, nil
	}
	return MulRate{}, fmt.Errorf("fr_mul_chain rate: selftest ran no fr_mul_chain kernel")
}

// FixedMulRate is the rate from a given Fr figure.
func FixedMulRate(fr float64, source string) MulRate {
	return MulRate{Fr: fr, Fp: fr / FpPerFr, Source: fmt.Sprintf("%s: Fr %.1f Gmul/s; Fp = Fr/(12/8)^2", source, fr/1e9)}
}

// MSMMuls counts the Fp multiplications of a Pippenger MSM of n points with
// window c and mwin bucket windows as the engine runs it (prover/gpu
// msm_plan.go): ⌈256/c⌉ windows of signed digits, one mixed addition per
// (point, window), and per bucket window 2^(c−1) buckets weighted by running
// sums (two full additions each). Without a table of base multiples mwin is
// the digit windows; a full table folds them into one.
func MSMMuls(n, c, mwin int, g2 bool) float64 {
	nwin := (256 + c - 1) / c
	adds := float64(n) * float64(nwin) * mulsPerMixedAdd
	buckets := float64(mwin) * float64(uint64(1)<<(c-1)) * 2 * mulsPerAdd
	m := adds + buckets
	if g2 {
		m *= fp2Muls
	}
	return m
}

// NTTMuls counts the Fr multiplications of a radix-2 NTT of size 2^logN:
// one per butterfly, (n/2)·log n.
func NTTMuls(logN int) float64 { return float64(uint64(1)<<logN) / 2 * float64(logN) }

// Estimate turns a multiplication count into a time at rate per second.
func Estimate(muls, rate float64) time.Duration {
	return time.Duration(muls / rate * float64(time.Second))
}

// Reference figures of sppark (supranational/sppark) on the H200 model
// (ms), inputs already on the GPU: MSM G1 and Fr NTT. They are not
// measured by cuzk: they are the figures given in cuzk's issue 4 (the GPU
// kernels' specification), where they were measured on the same H200
// model, and they serve only as the bar printed beside cuzk's own medians.
var (
	SpparkMSMG1 = map[int]float64{20: 24, 22: 58, 24: 176, 26: 623}
	SpparkNTT   = map[int]float64{20: 0.28, 24: 4.7, 27: 44}
)

// Rate returns the multiplication rate estimates use: the fr_mul_chain
// measurement over elems elements or, when the measurement fails for
// another reason than a wrong result, the recorded H200 figure.
func Rate(ctx context.Context, dev *driver.Device, elems int, seed uint64) (MulRate, error) {
	rate, err := MeasureMulRate(ctx, dev, elems, seed)
	if errors.Is(err, benchinput.ErrMismatch) {
		return rate, err
	}
	if err != nil {
		return FixedMulRate(FallbackFrRate, fmt.Sprintf("recorded H200 selftest figure (measuring failed: %v)", err)), nil
	}
	return rate, nil
}
