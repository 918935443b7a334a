package sha256

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Bit is a constant, a boolean variable, or the negation of one. It carries
// its value in proving mode (false in shape mode). Bits are plain values.
type Bit struct {
	v        r1cs.Variable
	constant bool
	neg      bool
	value    bool
}

// ConstBit returns the constant bit b.
func ConstBit(b bool) Bit { return Bit{constant: true, value: b} }

// Value is the bit's value (meaningful only in proving mode).
func (b Bit) Value() bool { return b.value }

// IsConstant reports whether b is a constant.
func (b Bit) IsConstant() bool { return b.constant }

// Not returns ¬b without constraints.
func (b Bit) Not() Bit {
	b.value = !b.value
	if !b.constant {
		b.neg = !b.neg
	}
	return b
}

var (
	one    = fr.One()
	two    = fr.NewElement(2)
	minus1 = func() fr.Element { var m fr.Element; m.Neg(&one); return m }()
)

// appendTo appends coeff·b to lc.
func (b Bit) appendTo(lc r1cs.LC, coeff *fr.Element) r1cs.LC {
	if !b.constant && !b.neg { // the common case first, without copying coeff twice
		return append(lc, r1cs.Term{Var: b.v, Coeff: *coeff})
	}
	return b.appendSpecial(lc, coeff)
}

// appendSpecial is appendTo for constant and negated bits.
func (b Bit) appendSpecial(lc r1cs.LC, coeff *fr.Element) r1cs.LC {
	if b.constant {
		if b.value {
			lc = append(lc, r1cs.Term{Var: r1cs.One, Coeff: *coeff})
		}
		return lc
	}
	var n fr.Element
	n.Neg(coeff)
	lc = append(lc, r1cs.Term{Var: r1cs.One, Coeff: *coeff})
	return append(lc, r1cs.Term{Var: b.v, Coeff: n})
}

// LC returns b as a linear combination.
func (b Bit) LC() r1cs.LC { return b.appendTo(nil, &one) }

func boolElement(b bool) fr.Element {
	if b {
		return one
	}
	return fr.Element{}
}

// b2i is a bit's value as an integer, for the direct values of a row.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// small holds the field elements −2 … 2, the values a bit gate's
// combinations take (small[i+2] = i).
var small = func() (t [5]fr.Element) {
	for i := range t {
		t[i].SetInt64(int64(i - 2))
	}
	return t
}()

// smallElement returns the field element i, −2 ≤ i ≤ 2.
func smallElement(i int) *fr.Element { return &small[i+2] }

// gates enforces the bit and word operations of the gadget. It keeps the
// linear combinations of one constraint in buffers reused by the next
// (Enforce does not retain its arguments), so a gate allocates nothing. In
// proving mode (rows not nil) a gate passes its row's values, which it knows
// from its bits, instead of building the combinations: the same rows,
// without the terms (r1cs.Direct). A gates value belongs to one circuit run.
type gates struct {
	api     r1cs.API
	rows    r1cs.Rows
	style   Style
	a, b, c r1cs.LC
}

func newGates(api r1cs.API) gates { return Compact.gates(api) }

func (s Style) gates(api r1cs.API) gates { return gates{api: api, rows: r1cs.Direct(api), style: s} }

// row adds a row of small values (each −2 … 2).
func (g *gates) row(va, vb, vc int) {
	g.rows.EnforceValues(smallElement(va), smallElement(vb), smallElement(vc))
}

// AllocBit allocates a private bit holding value and constrains it to be
// boolean: v·(1 − v) = 0.
func AllocBit(api r1cs.API, value bool) Bit {
	g := newGates(api)
	return g.allocBit(value)
}

func (g *gates) allocBit(value bool) Bit {
	v := g.api.Private(boolElement(value))
	if g.rows != nil { // v·(1 − v) = 0
		x := b2i(value)
		g.row(x, 1-x, 0)
		return Bit{v: v, value: value}
	}
	g.a = append(g.a[:0], r1cs.Term{Var: v, Coeff: one})
	g.b = append(g.b[:0], r1cs.Term{Var: r1cs.One, Coeff: one}, r1cs.Term{Var: v, Coeff: minus1})
	g.api.Enforce(g.a, g.b, nil)
	return Bit{v: v, value: value}
}

// newBit allocates an output bit whose booleanity follows from the
// constraint that defines it.
func (g *gates) newBit(value bool) Bit {
	return Bit{v: g.api.Private(boolElement(value)), value: value}
}

// sameVar reports whether a and b are the same variable (possibly negated).
func sameVar(a, b Bit) bool { return !a.constant && !b.constant && a.v == b.v }

// Xor returns a ⊕ b: free when either is constant or both share a
// variable, otherwise one constraint (2a)·b = a + b − c.
func Xor(api r1cs.API, a, b Bit) Bit {
	g := newGates(api)
	return g.xor(a, b)
}

func (g *gates) xor(a, b Bit) Bit {
	switch {
	case a.constant:
		return condNot(b, a.value)
	case b.constant:
		return condNot(a, b.value)
	case sameVar(a, b):
		return ConstBit(a.neg != b.neg)
	}
	c := g.newBit(a.value != b.value)
	if g.rows != nil { // (2a)·b = a + b − c
		x, y := b2i(a.value), b2i(b.value)
		g.row(2*x, y, x+y-b2i(c.value))
		return c
	}
	g.a = a.appendTo(g.a[:0], &two)
	g.b = b.appendTo(g.b[:0], &one)
	g.c = b.appendTo(a.appendTo(g.c[:0], &one), &one)
	g.c = append(g.c, r1cs.Term{Var: c.v, Coeff: minus1})
	g.api.Enforce(g.a, g.b, g.c)
	return c
}

func condNot(b Bit, flip bool) Bit {
	if flip {
		return b.Not()
	}
	return b
}

// And returns a ∧ b: free when either is constant or both share a
// variable, otherwise one constraint a·b = c.
func And(api r1cs.API, a, b Bit) Bit {
	g := newGates(api)
	return g.and(a, b)
}

func (g *gates) and(a, b Bit) Bit {
	switch {
	case a.constant:
		if a.value {
			return b
		}
		return ConstBit(false)
	case b.constant:
		return g.and(b, a)
	case sameVar(a, b):
		if a.neg == b.neg {
			return a
		}
		return ConstBit(false)
	}
	value := a.value && b.value
	if g.rows != nil { // a·b = c
		v := g.api.Private(boolElement(value))
		g.row(b2i(a.value), b2i(b.value), b2i(value))
		return Bit{v: v, value: value}
	}
	g.a = a.appendTo(g.a[:0], &one)
	g.b = b.appendTo(g.b[:0], &one)
	return Bit{v: r1cs.Product(g.api, g.a, g.b), value: value}
}

// Ch returns (e ∧ f) ⊕ (¬e ∧ g) with one constraint e·(f − g) = ch − g,
// folding constants.
func Ch(api r1cs.API, e, f, g Bit) Bit {
	gt := newGates(api)
	return gt.ch(e, f, g)
}

func (gt *gates) ch(e, f, g Bit) Bit {
	switch {
	case e.constant:
		if e.value {
			return f
		}
		return g
	case f.constant && g.constant && f.value == g.value:
		return f
	}
	value := g.value
	if e.value {
		value = f.value
	}
	ch := gt.newBit(value)
	if gt.rows != nil { // e·(f − g) = ch − g
		vg := b2i(g.value)
		gt.row(b2i(e.value), b2i(f.value)-vg, b2i(value)-vg)
		return ch
	}
	gt.a = e.appendTo(gt.a[:0], &one)
	gt.b = g.appendTo(f.appendTo(gt.b[:0], &one), &minus1)
	gt.c = g.appendTo(append(gt.c[:0], r1cs.Term{Var: ch.v, Coeff: one}), &minus1)
	gt.api.Enforce(gt.a, gt.b, gt.c)
	return ch
}

// Maj returns the majority of a, b, c: bc = b ∧ c, then
// a·(b + c − 2bc) = maj − bc (two constraints at most; constants fold). The
// Bellman style swaps the second constraint's factors, (b + c − 2bc)·a, so
// that bc stays out of B.
func Maj(api r1cs.API, a, b, c Bit) Bit {
	g := newGates(api)
	return g.maj(a, b, c)
}

func (g *gates) maj(a, b, c Bit) Bit {
	if a.constant && b.constant && c.constant {
		return ConstBit(majority(a.value, b.value, c.value))
	}
	bc := g.and(b, c)
	m := g.newBit(majority(a.value, b.value, c.value))
	if g.rows != nil { // a·(b + c − 2bc) = m − bc
		vbc := b2i(bc.value)
		va, vs := b2i(a.value), b2i(b.value)+b2i(c.value)-2*vbc
		if g.style == Bellman {
			va, vs = vs, va
		}
		g.row(va, vs, b2i(m.value)-vbc)
		return m
	}
	g.a = a.appendTo(g.a[:0], &one)
	g.b = bc.appendTo(c.appendTo(b.appendTo(g.b[:0], &one), &one), &minus2)
	g.c = bc.appendTo(append(g.c[:0], r1cs.Term{Var: m.v, Coeff: one}), &minus1)
	if g.style == Bellman {
		g.a, g.b = g.b, g.a
	}
	g.api.Enforce(g.a, g.b, g.c)
	return m
}

var minus2 = func() fr.Element { var m fr.Element; m.Neg(&two); return m }()

func majority(a, b, c bool) bool {
	n := 0
	for _, x := range []bool{a, b, c} {
		if x {
			n++
		}
	}
	return n >= 2
}
