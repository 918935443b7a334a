package sha256

import (
	"fmt"
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Word is a 32-bit word, least significant bit first.
type Word [32]Bit

// ConstWord returns the constant word x.
func ConstWord(x uint32) Word {
	var w Word
	for i := range w {
		w[i] = ConstBit(x>>i&1 == 1)
	}
	return w
}

// Value is the word's value (meaningful only in proving mode).
func (w *Word) Value() uint32 {
	x, _ := w.valueConst()
	return x
}

// valueConst returns the word's value and whether every bit is constant, in
// one pass (an addition reads both for each operand; Value and IsConstant
// read one).
func (w *Word) valueConst() (x uint32, constant bool) {
	constant = true
	for i := range w {
		if w[i].value {
			x |= 1 << i
		}
		constant = constant && w[i].constant
	}
	return x, constant
}

// IsConstant reports whether every bit of w is constant.
func (w *Word) IsConstant() bool {
	_, c := w.valueConst()
	return c
}

// rotr returns w rotated right by n.
func (w Word) rotr(n int) Word {
	var r Word
	for i := range r {
		r[i] = w[(i+n)%32]
	}
	return r
}

// shr returns w shifted right by n.
func (w Word) shr(n int) Word {
	var r Word
	for i := range r {
		if i+n < 32 {
			r[i] = w[i+n]
		} else {
			r[i] = ConstBit(false)
		}
	}
	return r
}

// xor3 returns a ⊕ b ⊕ c bitwise.
func (g *gates) xor3(a, b, c Word) Word {
	var r Word
	for i := range r {
		r[i] = g.xor(g.xor(a[i], b[i]), c[i])
	}
	return r
}

// pow2 holds 2^i for the bit positions an addition can reach.
var pow2 = func() [40]fr.Element {
	var p [40]fr.Element
	p[0].SetOne()
	for i := 1; i < len(p); i++ {
		p[i].Double(&p[i-1])
	}
	return p
}()

// maxTop is the largest carry position j an addition handles: sums below
// 2^40, up to 255 words (SHA-256 adds at most 7 words and a constant).
const maxTop = len(pow2) - 1

// topScale[j][i] is 2^(i+1−j): the coefficient of a weight-2^i term in
// 2·(sum − packed)/2^j, for the top-carry constraint of enforceTopBit.
var topScale = func() (t [maxTop + 1][maxTop + 1]fr.Element) {
	for j := 1; j <= maxTop; j++ {
		var inv fr.Element
		inv.Inverse(&pow2[j-1]) // 2^(1−j)
		for i := 0; i <= maxTop; i++ {
			t[j][i].Mul(&pow2[i], &inv)
		}
	}
	return t
}()

// negTopScale[j][i] is −topScale[j][i], the coefficients of the result and
// carry bits.
var negTopScale = func() (t [maxTop + 1][maxTop + 1]fr.Element) {
	for j := range t {
		for i := range t[j] {
			t[j][i].Neg(&topScale[j][i])
		}
	}
	return t
}()

// Add returns (k + Σ ws) mod 2^32. The operands are packed into one field
// element, which is split into 32 result bits and the carries; see the
// package documentation for the constraint count.
func Add(api r1cs.API, k uint32, ws ...Word) Word {
	g := newGates(api)
	return g.add(k, ws...)
}

func (g *gates) add(k uint32, ws ...Word) Word {
	sum, maxSum, constant := uint64(k), uint64(k), true
	for i := range ws {
		v, c := ws[i].valueConst()
		sum += uint64(v)
		if c {
			maxSum += uint64(v)
		} else {
			maxSum += 1<<32 - 1
			constant = false
		}
	}
	if constant {
		return ConstWord(uint32(sum))
	}
	n := max(bits.Len64(maxSum), 32)
	if n-1 > maxTop {
		panic(fmt.Sprintf("sha256: adding %d words overflows 2^%d", len(ws), maxTop+1))
	}
	if g.style == Bellman {
		return g.addBellman(k, ws, n, sum)
	}
	var w Word
	for i := 0; i < min(n-1, 32); i++ {
		w[i] = g.allocBit(sum>>i&1 == 1)
	}
	var carries [maxTop]Bit
	for i := 32; i < n-1; i++ {
		carries[i-32] = g.allocBit(sum>>i&1 == 1)
	}
	if n == 32 {
		// No carry: allocate bit 31 too and enforce the packing equality.
		w[31] = g.allocBit(sum>>31&1 == 1)
		if g.rows != nil { // packed · 1 = k + Σ ws, both sum (below 2^32)
			var v fr.Element
			v.SetUint64(sum)
			g.rows.EnforceValues(&v, &one, &v)
			return w
		}
		g.a = packTerms(g.a[:0], w[:], pow2[:])
		g.b = append(g.b[:0], r1cs.Term{Var: r1cs.One, Coeff: one})
		g.c = sumTerms(g.c[:0], k, ws, pow2[:])
		g.api.Enforce(g.a, g.b, g.c)
		return w
	}
	g.enforceTopBit(k, ws, w[:], carries[:n-33], sum)
	return w
}

// addBellman is add in the Bellman style: every result and carry bit is
// allocated with its booleanity constraint, and one more constraint,
// (k + Σ ws)·1 = Σ 2^i·b_i, holds the packing equality with the operands in
// A and the new bits in C, as bellman's UInt32::addmany writes it through
// its MultiEq (which also batches several such equalities into one
// constraint; here each has its own). It costs one constraint and one
// variable more than the compact form when there is a carry.
func (g *gates) addBellman(k uint32, ws []Word, n int, sum uint64) Word {
	var w Word
	for i := range w {
		w[i] = g.allocBit(sum>>i&1 == 1)
	}
	var carries [maxTop + 1]Bit
	for i := 32; i < n; i++ {
		carries[i-32] = g.allocBit(sum>>i&1 == 1)
	}
	if g.rows != nil { // (k + Σ ws)·1 = packed, both sum (below 2^40)
		var v fr.Element
		v.SetUint64(sum)
		g.rows.EnforceValues(&v, &one, &v)
		return w
	}
	g.a = sumTerms(g.a[:0], k, ws, pow2[:])
	g.b = append(g.b[:0], r1cs.Term{Var: r1cs.One, Coeff: one})
	g.c = packTerms(g.c[:0], w[:], pow2[:])
	g.c = packTerms(g.c, carries[:n-32], pow2[32:])
	g.api.Enforce(g.a, g.b, g.c)
	return w
}

// enforceTopBit constrains top = (sum − packed)/2^j to be boolean, where
// packed = Σ_{i<j} 2^i·b_i packs the result bits and the lower carries and
// j = 32 + len(carries); over boolean b_i this forces
// sum = packed + 2^j·top. It uses u = 2·top − 1 and u·u = 1, so that the
// long combination is a single factor passed twice and solved once. sum is
// the value of k + Σ ws (below 2^(j+1)), from which proving mode takes u.
func (g *gates) enforceTopBit(k uint32, ws []Word, low, carries []Bit, sum uint64) {
	j := 32 + len(carries)
	if g.rows != nil {
		u := smallElement(2*int(sum>>j&1) - 1)
		g.rows.EnforceValues(u, u, &one)
		return
	}
	scale, neg := topScale[j][:], negTopScale[j][:]
	u := sumTerms(g.a[:0], k, ws, scale)
	for i, b := range low {
		u = b.appendTo(u, &neg[i])
	}
	for i, b := range carries {
		u = b.appendTo(u, &neg[32+i])
	}
	g.a = append(u, r1cs.Term{Var: r1cs.One, Coeff: minus1})
	g.c = append(g.c[:0], r1cs.Term{Var: r1cs.One, Coeff: one})
	g.api.Enforce(g.a, g.a, g.c)
}

// sumTerms appends Σ_i weight[i]·(bit i of k + Σ ws) to lc.
func sumTerms(lc r1cs.LC, k uint32, ws []Word, weight []fr.Element) r1cs.LC {
	if k != 0 {
		var c fr.Element
		c.SetUint64(uint64(k))
		c.Mul(&c, &weight[0])
		lc = append(lc, r1cs.Term{Var: r1cs.One, Coeff: c})
	}
	for i := range ws {
		for b := range ws[i] {
			lc = ws[i][b].appendTo(lc, &weight[b])
		}
	}
	return lc
}

// packTerms appends Σ_i weight[i]·bits[i] to lc.
func packTerms(lc r1cs.LC, bits []Bit, weight []fr.Element) r1cs.LC {
	for i, b := range bits {
		lc = b.appendTo(lc, &weight[i])
	}
	return lc
}
