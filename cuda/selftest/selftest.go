package selftest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// Result is one kernel's outcome.
type Result struct {
	// Kernel is the extern "C" name; Unit the fatbin it lives in.
	Kernel, Unit string
	// Elements is how many outputs were compared.
	Elements int
	// Mismatches counts outputs that differ from gnark-crypto; First is the
	// index of the first (-1 when none) and Detail describes it.
	Mismatches, First int
	Detail            string
	// GPUTime is the device time of one launch, from CUDA events, measured
	// after a warm-up launch on the same inputs.
	GPUTime time.Duration
	// MulsPerElement is the Fr multiplications per element of a rate
	// kernel (fr_mul_chain), 0 for the others.
	MulsPerElement int
}

// Pass reports whether every output matched.
func (r Result) Pass() bool { return r.Elements > 0 && r.Mismatches == 0 }

// PerSecond is the launch's throughput in elements per second.
func (r Result) PerSecond() float64 {
	if r.GPUTime <= 0 {
		return 0
	}
	return float64(r.Elements) / r.GPUTime.Seconds()
}

// MulsPerSecond is a rate kernel's Fr multiplications per second (0 for
// the other kernels).
func (r Result) MulsPerSecond() float64 { return r.PerSecond() * float64(r.MulsPerElement) }

// Report is the outcome of one Run.
type Report struct {
	Device   string // driver.Info.String() of the device used
	Elements int
	Results  []Result
}

// OK reports whether every kernel ran and passed.
func (r Report) OK() bool {
	for _, res := range r.Results {
		if !res.Pass() {
			return false
		}
	}
	return len(r.Results) == len(cases)
}

// String renders the report as a small table, one kernel per line.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "selftest on %s, %d elements per kernel\n", r.Device, r.Elements)
	for _, res := range r.Results {
		verdict := "PASS"
		if !res.Pass() {
			verdict = fmt.Sprintf("FAIL %d mismatches, first at %d: %s", res.Mismatches, res.First, res.Detail)
		}
		rate := ""
		if res.MulsPerElement > 0 {
			rate = fmt.Sprintf(" (%.1f Gmul/s)", res.MulsPerSecond()/1e9)
		}
		fmt.Fprintf(&b, "  %-13s %-8s %10v %8.2f Gelem/s%s  %s\n", res.Kernel, res.Unit,
			res.GPUTime.Round(time.Microsecond/10), res.PerSecond()/1e9, rate, verdict)
	}
	return b.String()
}

// Run checks every fr_* kernel on dev with n elements each (n ≥ 1; the first
// 25 positions hold the edge-value combinations when n allows), drawing
// operands from rnd. A nil dev opens device 0 for the run and closes it
// after. Kernel mismatches are reported in the Report, not as an error; the
// error is for what stopped the run: no driver or GPU (matching
// driver.ErrNoGPU), no embedded kernels (cuda.ErrNoKernels),
// a driver failure, or ctx ending between kernels.
func Run(ctx context.Context, dev *driver.Device, rnd *rand.Rand, n int) (rep Report, err error) {
	if n < 1 {
		return Report{}, fmt.Errorf("selftest: %d elements, need at least 1", n)
	}
	if dev == nil {
		if dev, err = driver.Open(0); err != nil {
			return Report{}, fmt.Errorf("selftest: %w", err)
		}
		defer func() { err = errors.Join(err, dev.Close()) }()
	}
	rep = Report{Device: dev.Info().String(), Elements: n}
	xs, ys := operands(rnd, n)
	r, err := newRunner(dev, n)
	if err != nil {
		return rep, err
	}
	defer func() { err = errors.Join(err, r.close()) }()
	for _, k := range cases {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("selftest: %w", err)
		}
		a, b, want := k.prepare(xs, ys)
		got := make([]fr.Element, n)
		el, err := r.run(k, a, b, got)
		if err != nil {
			return rep, fmt.Errorf("selftest %s: %w", k.fn, err)
		}
		rep.Results = append(rep.Results, result(k, a, b, got, want, el))
	}
	return rep, nil
}

func result(k kernelCase, a, b, got, want []fr.Element, el time.Duration) Result {
	res := Result{Kernel: k.fn, Unit: k.unit, Elements: len(want), GPUTime: el, MulsPerElement: k.muls}
	res.Mismatches, res.First = compare(got, want)
	if i := res.First; i >= 0 {
		res.Detail = fmt.Sprintf("a=%v", a[i].Bits())
		if k.binary {
			res.Detail += fmt.Sprintf(" b=%v", b[i].Bits())
		}
		res.Detail += fmt.Sprintf(" got limbs %v want %v", got[i], want[i])
	}
	return res
}
