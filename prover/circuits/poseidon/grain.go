package poseidon

import (
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// fieldBits is n, the bit length of the BLS12-381 scalar field modulus.
const fieldBits = 255

// grain is the 80-bit Grain LFSR of the reference generator
// (generate_parameters_grain.sage), used in self-shrinking mode.
type grain struct {
	s [80]uint8
}

// newGrain seeds the LFSR with the parameter encoding of the reference:
// field (2 bits, 1 = GF(p)), S-box (4 bits, 0 = x^α), n (12), t (12),
// R_F (10), R_P (10), then 30 ones; the first 160 outputs are discarded.
func newGrain(t, rf, rp int) *grain {
	g := &grain{}
	pos := 0
	put := func(v, width int) {
		for i := width - 1; i >= 0; i-- {
			g.s[pos] = uint8(v>>i) & 1
			pos++
		}
	}
	put(1, 2)
	put(0, 4)
	put(fieldBits, 12)
	put(t, 12)
	put(rf, 10)
	put(rp, 10)
	for pos < len(g.s) {
		g.s[pos] = 1
		pos++
	}
	for i := 0; i < 160; i++ {
		g.step()
	}
	return g
}

// step shifts the register by one and returns the new bit
// b_{i+80} = b_{i+62} ⊕ b_{i+51} ⊕ b_{i+38} ⊕ b_{i+23} ⊕ b_{i+13} ⊕ b_i.
func (g *grain) step() uint8 {
	b := g.s[62] ^ g.s[51] ^ g.s[38] ^ g.s[23] ^ g.s[13] ^ g.s[0]
	copy(g.s[:], g.s[1:])
	g.s[79] = b
	return b
}

// bit returns the next self-shrunk bit: pairs (a, b) are drawn and b is
// emitted when a = 1, discarded otherwise.
func (g *grain) bit() uint8 {
	for {
		a, b := g.step(), g.step()
		if a == 1 {
			return b
		}
	}
}

// sample returns the next n-bit integer, most significant bit first.
func (g *grain) sample() *big.Int {
	v := new(big.Int)
	for i := 0; i < fieldBits; i++ {
		v.Lsh(v, 1)
		if g.bit() == 1 {
			v.SetBit(v, 0, 1)
		}
	}
	return v
}

// roundConstant returns the next sample below p (rejection sampling).
func (g *grain) roundConstant() fr.Element {
	p := fr.Modulus()
	for {
		v := g.sample()
		if v.Cmp(p) < 0 {
			var e fr.Element
			e.SetBigInt(v)
			return e
		}
	}
}

// element returns the next sample reduced modulo p, as the reference's
// F(grain_random_bits(n)) does for the MDS matrix.
func (g *grain) element() fr.Element {
	var e fr.Element
	e.SetBigInt(g.sample())
	return e
}

// cauchyMDS draws x_0…x_{t−1}, y_0…y_{t−1} and returns M[i][j] = 1/(x_i + y_j),
// redrawing all 2t values when two coincide or some x_i + y_j = 0, exactly as
// the reference's create_mds_p. The reference then screens the matrix with
// its algorithms 1–3 against invariant subspaces; for a random Cauchy matrix
// over a 255-bit field a rejection has negligible probability, and the Width3
// and Width5 test vectors confirm that the first draw is the one used there.
func cauchyMDS(g *grain, t int) [][]fr.Element {
	for {
		vals := make([]fr.Element, 2*t)
		for i := range vals {
			vals[i] = g.element()
		}
		if m, ok := cauchy(vals[:t], vals[t:]); ok {
			return m
		}
	}
}

func cauchy(xs, ys []fr.Element) ([][]fr.Element, bool) {
	seen := make(map[fr.Element]bool, len(xs)+len(ys))
	for _, v := range append(append([]fr.Element{}, xs...), ys...) {
		if seen[v] {
			return nil, false
		}
		seen[v] = true
	}
	m := make([][]fr.Element, len(xs))
	for i := range xs {
		m[i] = make([]fr.Element, len(ys))
		for j := range ys {
			var s fr.Element
			s.Add(&xs[i], &ys[j])
			if s.IsZero() {
				return nil, false
			}
			m[i][j].Inverse(&s)
		}
	}
	return m, true
}
