package benchinput

import (
	"fmt"
	"math/big"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
)

// A quotient of 2^27 coefficients is checked at one random point ζ instead
// of against a CPU recomputation (seven 2^27 FFTs): when c_i = a_i·b_i on the
// domain, A·B − C vanishes there, so h = (A·B − C)/Z exactly and
// h(ζ)·(ζ^n − 1) = A(ζ)·B(ζ) − C(ζ). A wrong h passes with probability at most
// 2n/r < 2^-220 (Schwartz–Zippel). A(ζ) comes from the evaluations by the
// barycentric formula, h(ζ) by Horner: both O(n), parallel.

// QuotientProbe holds ζ and A(ζ)·B(ζ) − C(ζ), taken before the quotient
// overwrites its inputs.
type QuotientProbe struct {
	zeta, want fr.Element
	n          int
}

// NewQuotientProbe evaluates a, b, c (evaluations over the domain of size
// len(a)) at zeta.
func NewQuotientProbe(a, b, c []fr.Element, zeta fr.Element) (QuotientProbe, error) {
	v, err := evalAt(zeta, a, b, c)
	if err != nil {
		return QuotientProbe{}, err
	}
	var want fr.Element
	want.Mul(&v[0], &v[1]).Sub(&want, &v[2])
	return QuotientProbe{zeta: zeta, want: want, n: len(a)}, nil
}

// check returns nil when h(ζ)·(ζ^n − 1) equals the probe's value.
func (q QuotientProbe) Check(h []fr.Element) error {
	var zn, one fr.Element
	one.SetOne()
	zn.Exp(q.zeta, big.NewInt(int64(q.n))).Sub(&zn, &one)
	got := hornerAt(h, q.zeta)
	got.Mul(&got, &zn)
	if got != q.want {
		return fmt.Errorf("%w: h(ζ)·Z(ζ) ≠ a(ζ)·b(ζ) − c(ζ) at a random ζ", ErrMismatch)
	}
	return nil
}

// evalAt returns, for each vector of evaluations over the domain of size n
// (gnark-crypto's generator ω), its polynomial's value at zeta ∉ domain:
// Σ v_i·L_i(ζ), L_i(ζ) = (ζ^n − 1)/n · ω^i/(ζ − ω^i).
func evalAt(zeta fr.Element, vs ...[]fr.Element) ([]fr.Element, error) {
	n := len(vs[0])
	omega, err := fft.Generator(uint64(n))
	if err != nil {
		return nil, fmt.Errorf("evaluate at ζ: domain of %d: %w", n, err)
	}
	var mu sync.Mutex
	sums := make([]fr.Element, len(vs))
	ParallelFor(n, func(_, lo, hi int) {
		part := evalRange(zeta, omega, lo, hi, vs)
		mu.Lock()
		defer mu.Unlock()
		for k := range sums {
			sums[k].Add(&sums[k], &part[k])
		}
	})
	var scale, one, nInv fr.Element
	one.SetOne()
	scale.Exp(zeta, big.NewInt(int64(n))).Sub(&scale, &one)
	nInv.SetUint64(uint64(n)).Inverse(&nInv)
	scale.Mul(&scale, &nInv)
	for k := range sums {
		sums[k].Mul(&sums[k], &scale)
	}
	return sums, nil
}

// evalRange returns Σ_{lo ≤ i < hi} v_i·ω^i/(ζ − ω^i) for each v in vs,
// inverting in blocks.
func evalRange(zeta, omega fr.Element, lo, hi int, vs [][]fr.Element) []fr.Element {
	const block = 4096
	part := make([]fr.Element, len(vs))
	pw := make([]fr.Element, block)
	den := make([]fr.Element, block)
	var cur fr.Element
	cur.Exp(omega, big.NewInt(int64(lo)))
	for start := lo; start < hi; start += block {
		m := min(block, hi-start)
		for i := range m {
			pw[i] = cur
			den[i].Sub(&zeta, &cur)
			cur.Mul(&cur, &omega)
		}
		inv := fr.BatchInvert(den[:m])
		for i := range m {
			var wgt, t fr.Element
			wgt.Mul(&pw[i], &inv[i])
			for k, v := range vs {
				t.Mul(&v[start+i], &wgt)
				part[k].Add(&part[k], &t)
			}
		}
	}
	return part
}

// hornerAt returns Σ h_i·ζ^i.
func hornerAt(h []fr.Element, zeta fr.Element) fr.Element {
	var mu sync.Mutex
	var sum fr.Element
	ParallelFor(len(h), func(_, lo, hi int) {
		var acc fr.Element
		for i := hi - 1; i >= lo; i-- {
			acc.Mul(&acc, &zeta).Add(&acc, &h[i])
		}
		var shift fr.Element
		shift.Exp(zeta, big.NewInt(int64(lo)))
		acc.Mul(&acc, &shift)
		mu.Lock()
		defer mu.Unlock()
		sum.Add(&sum, &acc)
	})
	return sum
}
