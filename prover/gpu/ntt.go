package gpu

import (
	"fmt"
	"math/big"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"

	"github.com/cuzk-dev/cuzk/cuda"
	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// elemBytes is the size of one fr.Element on host and device.
const elemBytes = int(unsafe.Sizeof(fr.Element{}))

// kernelUnit is the name of the NTT kernel unit (cuda/kernels/ntt.cu).
const kernelUnit = "ntt"

// nttKernels are the functions of the NTT module.
type nttKernels struct {
	mod                                     *driver.Module
	fDIF, fDIT, fPowers, fBitrev, fQuotient *driver.Function
	fMul, fSubScale                         *driver.Function // the lean quotient's two pointwise steps
}

func loadNTTKernels(c *driver.Ctx) (*nttKernels, error) {
	fb, err := cuda.Fatbin(kernelUnit)
	if err != nil {
		return nil, fmt.Errorf("ntt kernels: %w", err)
	}
	mod, err := c.LoadModule(fb)
	if err != nil {
		return nil, fmt.Errorf("ntt kernels: load module: %w", err)
	}
	k := &nttKernels{mod: mod}
	for _, f := range []struct {
		dst  **driver.Function
		name string
	}{
		{&k.fDIF, "ntt_dif_pass"}, {&k.fDIT, "ntt_dit_pass"}, {&k.fPowers, "ntt_powers"},
		{&k.fBitrev, "ntt_bitrev"}, {&k.fQuotient, "ntt_quotient"}, {&k.fMul, "ntt_mul"}, {&k.fSubScale, "ntt_sub_scale"},
	} {
		if *f.dst, err = c.Function(mod, f.name); err != nil {
			return nil, fmt.Errorf("ntt kernels: %w", err)
		}
	}
	return k, nil
}

// scaleKind names a per-index factor table pair of a domain.
type scaleKind int

const (
	scaleInvN      scaleKind = iota // 1/n: plain inverse transform
	scaleCoset                      // g^j: coset forward transform
	scaleCosetInvN                  // g^j/n: coset forward after an unscaled inverse (H path)
	scaleCosetInv                   // g^−j/n: coset inverse transform
	numScaleKinds
)

// scaleTables is factor(j) = lo[j mod 2^s]·hi[j >> s] on the device, with
// s = splitLog(logN) of its domain.
type scaleTables struct {
	lo, hi driver.DevicePtr
}

// domain is the device state of one transform size: the twiddle table
// w[i] = ω^i (i < n/2, ω = gnark-crypto's fft.NewDomain(n).Generator) and the
// scale tables, built on first use and kept for the Backend's lifetime.
type domain struct {
	logN   uint32
	cpu    *fft.Domain
	w      driver.DevicePtr
	scales [numScaleKinds]*scaleTables
}

// n returns the transform size.
func (d *domain) n() int { return 1 << d.logN }

// raw returns e's bytes, for passing a field element by value to a kernel.
func raw(e fr.Element) driver.Raw { return append(driver.Raw(nil), driver.Bytes([]fr.Element{e})...) }

// powChunk is how many consecutive powers one thread of ntt_powers writes.
const powChunk = 64

// powers fills t[i] = c·base^i for i < count on stream s.
func (k *nttKernels) powers(c *driver.Ctx, s *driver.Stream, t driver.DevicePtr, base, scale fr.Element, count int) error {
	threads := uint32(128)
	chunks := uint32((count + powChunk - 1) / powChunk)
	cfg := driver.LaunchConfig{Grid: driver.Dim3{X: (chunks + threads - 1) / threads}, Block: driver.Dim3{X: threads}, Stream: s}
	return c.Launch(k.fPowers, cfg, t, raw(base), raw(scale), uint32(count), uint32(powChunk))
}

// newDomain allocates and fills the twiddle table of size 2^logN.
func (k *nttKernels) newDomain(c *driver.Ctx, s *driver.Stream, logN uint32) (*domain, error) {
	d := &domain{logN: logN, cpu: fft.NewDomain(uint64(1)<<logN, fft.WithoutPrecompute())}
	half := max(1, d.n()/2)
	w, err := c.Alloc(half * elemBytes)
	if err != nil {
		return nil, fmt.Errorf("ntt twiddles 2^%d: %w", logN, err)
	}
	d.w = w
	if err := k.powers(c, s, w, d.cpu.Generator, fr.One(), half); err != nil {
		_ = c.Free(w) // the launch error is the one to report
		return nil, fmt.Errorf("ntt twiddles 2^%d: %w", logN, err)
	}
	return d, nil
}

// scaleParams returns the factors of kind on cpu's domain: factor(j) =
// mul·base^j.
func scaleParams(cpu *fft.Domain, kind scaleKind) (base, mul fr.Element) {
	switch kind {
	case scaleCoset:
		return cpu.FrMultiplicativeGen, fr.One()
	case scaleCosetInvN:
		return cpu.FrMultiplicativeGen, cpu.CardinalityInv
	case scaleCosetInv:
		return cpu.FrMultiplicativeGenInv, cpu.CardinalityInv
	}
	return fr.One(), cpu.CardinalityInv
}

// scaleOf returns the scale tables of kind on d, building them on first use.
func (k *nttKernels) scaleOf(c *driver.Ctx, s *driver.Stream, d *domain, kind scaleKind) (*scaleTables, error) {
	if t := d.scales[kind]; t != nil {
		return t, nil
	}
	base, mul := scaleParams(d.cpu, kind)
	t := &scaleTables{}
	sb := splitLog(d.logN)
	nlo, nhi := 1<<sb, 1<<(d.logN-sb)
	p, err := c.Alloc((nlo + nhi) * elemBytes)
	if err != nil {
		return nil, fmt.Errorf("ntt scale table 2^%d: %w", d.logN, err)
	}
	t.lo, t.hi = p, p.Add(nlo*elemBytes)
	var step fr.Element
	step.Exp(base, new(big.Int).SetUint64(uint64(nlo)))
	if err := k.powers(c, s, t.lo, base, fr.One(), nlo); err != nil {
		return nil, fmt.Errorf("ntt scale table 2^%d: %w", d.logN, err)
	}
	if err := k.powers(c, s, t.hi, step, mul, nhi); err != nil {
		return nil, fmt.Errorf("ntt scale table 2^%d: %w", d.logN, err)
	}
	d.scales[kind] = t
	return t, nil
}

// free releases d's device memory.
func (d *domain) free(c *driver.Ctx) error {
	err := c.Free(d.w)
	for _, t := range d.scales {
		if t != nil {
			if e := c.Free(t.lo); err == nil {
				err = e
			}
		}
	}
	return err
}

// args returns the table arguments of an optional scale (zero: none); the
// split is the domain's, splitLog.
func (t *scaleTables) args() (driver.DevicePtr, driver.DevicePtr) {
	if t == nil {
		return 0, 0
	}
	return t.lo, t.hi
}

// passes runs every DIF (or DIT) pass of d on data. A DIT run's first pass
// gathers from src when src is non-zero (data = its bit-reversal, src left
// unchanged) and, when first is non-nil, scales each element by first's
// factor of its source index. A DIF run takes neither.
func (k *nttKernels) passes(c *driver.Ctx, s *driver.Stream, data, src driver.DevicePtr, d *domain, dif, inverse bool, first *scaleTables) error {
	inv := uint32(0)
	if inverse {
		inv = 1
	}
	plan, f := ditPlan(d.logN), k.fDIT
	if dif {
		plan, f = difPlan(d.logN), k.fDIF
	}
	for i, p := range plan {
		cfg := driver.LaunchConfig{Grid: driver.Dim3{X: p.blocks(d.logN)}, Block: driver.Dim3{X: p.threads()}, Stream: s}
		var args []any
		if dif {
			args = []any{data, d.w, d.logN, p.lo, p.k, p.logG, p.sh, inv}
		} else {
			var from driver.DevicePtr
			var sc *scaleTables
			if i == 0 {
				from, sc = src, first
			}
			lo, hi := sc.args()
			args = []any{data, from, d.w, d.logN, p.lo, p.k, p.logG, p.sh, inv, lo, hi, splitLog(d.logN)}
		}
		if err := c.Launch(f, cfg, args...); err != nil {
			return fmt.Errorf("ntt pass %d of 2^%d: %w", i, d.logN, err)
		}
	}
	return nil
}

// elementwise returns the launch shape of a one-thread-per-element kernel.
func elementwise(n int, s *driver.Stream) driver.LaunchConfig {
	const threads = 256
	return driver.LaunchConfig{Grid: driver.Dim3{X: uint32((n + threads - 1) / threads)}, Block: driver.Dim3{X: threads}, Stream: s}
}

// transform writes to dst (≠ src) the natural-order transform of src, in
// natural order, on d: forward (evaluations from coefficients) or inverse,
// plain or on the coset g·H of gnark-crypto's domain; src is scratch.
//
// A forward transform is one DIT run whose first pass reads src in
// bit-reversed order (multiplying element j by g^j on the coset), so no pass
// of its own permutes the data. An inverse transform is a DIF run on src
// followed by ntt_bitrev into dst, which also applies 1/n (g^−j/n on the
// coset): the factor costs two multiplications per element, free in that
// memory-bound permutation but not in a compute-bound pass, where the same
// gathering DIT run measured 3 % slower at 2^24 (docs/perf-ntt.md,
// "Bit reversal in the first pass").
func (k *nttKernels) transform(c *driver.Ctx, s *driver.Stream, dst, src driver.DevicePtr, d *domain, inverse, coset bool) error {
	if !inverse {
		var sc *scaleTables
		if coset {
			var err error
			if sc, err = k.scaleOf(c, s, d, scaleCoset); err != nil {
				return err
			}
		}
		return k.passes(c, s, dst, src, d, false, false, sc)
	}
	kind := scaleInvN
	if coset {
		kind = scaleCosetInv
	}
	sc, err := k.scaleOf(c, s, d, kind)
	if err != nil {
		return err
	}
	if err := k.passes(c, s, src, 0, d, true, true, nil); err != nil {
		return err
	}
	lo, hi := sc.args()
	if err := c.Launch(k.fBitrev, elementwise(d.n(), s), dst, src, d.logN, lo, hi, splitLog(d.logN)); err != nil {
		return fmt.Errorf("ntt bit reversal 2^%d: %w", d.logN, err)
	}
	return nil
}

// toCoset turns evaluations over H into evaluations over g·H, both in
// natural order: an unscaled inverse DIF transform leaves n·(coefficients)
// in bit-reversed order, and the forward DIT transform multiplies the
// coefficient of index j by g^j/n as it loads it.
func (k *nttKernels) toCoset(c *driver.Ctx, s *driver.Stream, v driver.DevicePtr, d *domain) error {
	sc, err := k.scaleOf(c, s, d, scaleCosetInvN)
	if err != nil {
		return err
	}
	if err := k.passes(c, s, v, 0, d, true, true, nil); err != nil {
		return err
	}
	return k.passes(c, s, v, 0, d, false, false, sc)
}

// divideAndInterpolate computes a = (a·b − c)/Z on the coset (Z = g^n − 1
// there) and interpolates a from g·H into natural-order coefficients in out
// (out ≠ a; it may be b or cv, which are read first); a is scratch.
func (k *nttKernels) divideAndInterpolate(c *driver.Ctx, s *driver.Stream, out, a, b, cv driver.DevicePtr, d *domain) error {
	den := cosetVanishingInverse(d)
	if err := c.Launch(k.fQuotient, elementwise(d.n(), s), a, b, cv, raw(den), uint32(d.n())); err != nil {
		return fmt.Errorf("quotient pointwise 2^%d: %w", d.logN, err)
	}
	return k.transform(c, s, out, a, d, true, true)
}

// multiply sets a = a·b pointwise: the lean quotient's first step, after
// which b's storage may take c.
func (k *nttKernels) multiply(c *driver.Ctx, s *driver.Stream, a, b driver.DevicePtr, d *domain) error {
	if err := c.Launch(k.fMul, elementwise(d.n(), s), a, b, uint32(d.n())); err != nil {
		return fmt.Errorf("quotient product 2^%d: %w", d.logN, err)
	}
	return nil
}

// subtractDivideAndInterpolate is divideAndInterpolate for a that already
// holds a·b (multiply): a = (a − c)/Z on the coset, interpolated into out
// (out ≠ a; it may be cv, which is read first); a is scratch.
func (k *nttKernels) subtractDivideAndInterpolate(c *driver.Ctx, s *driver.Stream, out, a, cv driver.DevicePtr, d *domain) error {
	den := cosetVanishingInverse(d)
	if err := c.Launch(k.fSubScale, elementwise(d.n(), s), a, cv, raw(den), uint32(d.n())); err != nil {
		return fmt.Errorf("quotient pointwise 2^%d: %w", d.logN, err)
	}
	return k.transform(c, s, out, a, d, true, true)
}

// cosetVanishingInverse returns 1/(g^n − 1), the inverse of Z(X) = X^n − 1
// at every point of the coset g·H.
func cosetVanishingInverse(d *domain) fr.Element {
	var den fr.Element
	one := fr.One()
	den.Exp(d.cpu.FrMultiplicativeGen, new(big.Int).SetUint64(uint64(d.n())))
	den.Sub(&den, &one).Inverse(&den)
	return den
}
