package selftest

import (
	"math/rand/v2"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// kernelCase is one kernel and its CPU reference.
type kernelCase struct {
	unit   string // fatbin name (cuda/kernels/<unit>.cu)
	fn     string // extern "C" kernel name
	binary bool   // takes (out, a, b, n) rather than (out, a, n)
	// expect maps random elements x, y to the kernel's inputs a, b and the
	// output it must produce.
	expect func(x, y *fr.Element) (a, b, want fr.Element)
	// muls is the Fr multiplications per element of a rate kernel (0: not
	// one).
	muls int
}

// mulChain is the rounds of fr_mul_chain (kMulChain in
// cuda/include/cuzk/fr.cuh), two multiplications each.
const mulChain = 16

// cases lists every fr_* kernel. Inputs and expectations go through
// gnark-crypto only: to_mont gets x's canonical limbs and must produce x.
var cases = []kernelCase{
	{unit: "fr_add", fn: "fr_add", binary: true, expect: func(x, y *fr.Element) (a, b, w fr.Element) {
		w.Add(x, y)
		return *x, *y, w
	}},
	{unit: "fr_sub", fn: "fr_sub", binary: true, expect: func(x, y *fr.Element) (a, b, w fr.Element) {
		w.Sub(x, y)
		return *x, *y, w
	}},
	{unit: "fr_sub", fn: "fr_neg", expect: func(x, _ *fr.Element) (a, b, w fr.Element) {
		w.Neg(x)
		return *x, b, w
	}},
	{unit: "fr_mul", fn: "fr_mul", binary: true, expect: func(x, y *fr.Element) (a, b, w fr.Element) {
		w.Mul(x, y)
		return *x, *y, w
	}},
	{unit: "fr_mul", fn: "fr_mul_chain", binary: true, muls: 2 * mulChain, expect: func(x, y *fr.Element) (a, b, w fr.Element) {
		u, v := *x, *y
		for range mulChain {
			u.Mul(&u, &v)
			v.Mul(&v, &u)
		}
		w.Add(&u, &v)
		return *x, *y, w
	}},
	{unit: "fr_sqr", fn: "fr_sqr", expect: func(x, _ *fr.Element) (a, b, w fr.Element) {
		w.Square(x)
		return *x, b, w
	}},
	{unit: "fr_mont", fn: "fr_to_mont", expect: func(x, _ *fr.Element) (a, b, w fr.Element) {
		return fr.Element(x.Bits()), b, *x
	}},
	{unit: "fr_mont", fn: "fr_from_mont", expect: func(x, _ *fr.Element) (a, b, w fr.Element) {
		return *x, b, fr.Element(x.Bits())
	}},
}

// modulus holds r's 64-bit limbs, little-endian.
var modulus = func() (q fr.Element) {
	for i, w := range fr.Modulus().Bits() {
		q[i] = uint64(w)
	}
	return q
}()

// edges are the values every run starts with: 0, 1 and r−1, and the raw
// Montgomery limb patterns 1 and r−1 (the values R^−1 and (r−1)·R^−1).
func edges() []fr.Element {
	var one, minusOne fr.Element
	one.SetOne()
	minusOne.Neg(&one)
	rawMax := modulus
	rawMax[0]--
	return []fr.Element{{}, one, minusOne, {1, 0, 0, 0}, rawMax}
}

// randomElement draws a uniform element by rejection sampling on its
// Montgomery limbs (each value's limbs are a bijection of the value).
func randomElement(rnd *rand.Rand) fr.Element {
	for {
		e := fr.Element{rnd.Uint64(), rnd.Uint64(), rnd.Uint64(), rnd.Uint64() >> 1}
		if less(&e, &modulus) {
			return e
		}
	}
}

func less(a, b *fr.Element) bool {
	for i := fr.Limbs - 1; i >= 0; i-- {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// operands returns n pairs: every combination of edge values first, then
// random elements.
func operands(rnd *rand.Rand, n int) (xs, ys []fr.Element) {
	xs, ys = make([]fr.Element, n), make([]fr.Element, n)
	e := edges()
	for i := range n {
		if i < len(e)*len(e) {
			xs[i], ys[i] = e[i/len(e)], e[i%len(e)]
			continue
		}
		xs[i], ys[i] = randomElement(rnd), randomElement(rnd)
	}
	return xs, ys
}

// prepare builds a kernel's inputs and expected outputs from operands.
func (k kernelCase) prepare(xs, ys []fr.Element) (a, b, want []fr.Element) {
	a, want = make([]fr.Element, len(xs)), make([]fr.Element, len(xs))
	if k.binary {
		b = make([]fr.Element, len(xs))
	}
	for i := range xs {
		ai, bi, wi := k.expect(&xs[i], &ys[i])
		a[i], want[i] = ai, wi
		if k.binary {
			b[i] = bi
		}
	}
	return a, b, want
}

// compare counts the positions where got differs from want and returns the
// first of them, or -1.
func compare(got, want []fr.Element) (mismatches, first int) {
	first = -1
	for i := range want {
		if got[i] != want[i] {
			if first < 0 {
				first = i
			}
			mismatches++
		}
	}
	return mismatches, first
}
