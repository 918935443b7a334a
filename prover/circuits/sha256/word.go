package sha256

import (
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
	var x uint32
	for i, b := range w {
		if b.value {
			x |= 1 << i
		}
	}
	return x
}

// IsConstant reports whether every bit of w is constant.
func (w *Word) IsConstant() bool {
	for _, b := range w {
		if !b.constant {
			return false
		}
	}
	return true
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
func xor3(api r1cs.API, a, b, c Word) Word {
	var r Word
	for i := range r {
		r[i] = Xor(api, Xor(api, a[i], b[i]), c[i])
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

// Add returns (k + Σ ws) mod 2^32. The operands are packed into one field
// element, which is split into 32 result bits and the carries; see the
// package documentation for the constraint count.
func Add(api r1cs.API, k uint32, ws ...Word) Word {
	sum, maxSum := uint64(k), uint64(k)
	constant := true
	sumLC := r1cs.LC{}
	if k != 0 {
		sumLC = r1cs.ConstUint64(uint64(k))
	}
	for i := range ws {
		sum += uint64(ws[i].Value())
		if ws[i].IsConstant() {
			maxSum += uint64(ws[i].Value())
		} else {
			maxSum += 1<<32 - 1
			constant = false
		}
		for j, b := range ws[i] {
			sumLC = b.appendTo(sumLC, pow2[j])
		}
	}
	if constant {
		return ConstWord(uint32(sum))
	}
	n := max(bits.Len64(maxSum), 32)
	out := make([]Bit, n-1)
	packed := r1cs.LC{}
	for i := range out {
		out[i] = AllocBit(api, sum>>i&1 == 1)
		packed = packed.AddTerm(pow2[i], out[i].v)
	}
	if n == 32 {
		// No carry: allocate bit 31 too and enforce the packing equality.
		top := AllocBit(api, sum>>31&1 == 1)
		api.Enforce(packed.AddTerm(pow2[31], top.v), r1cs.ConstUint64(1), sumLC)
		out = append(out, top)
	} else {
		enforceTopBit(api, sumLC, packed, n-1)
	}
	var w Word
	copy(w[:], out[:32])
	return w
}

// enforceTopBit constrains top = (sum − packed)/2^j to be boolean; with
// packed = Σ_{i<j} 2^i b_i over boolean b_i this forces sum = packed + 2^j·top.
func enforceTopBit(api r1cs.API, sum, packed r1cs.LC, j int) {
	var inv fr.Element
	inv.Inverse(&pow2[j])
	top := append(r1cs.LC{}, sum...).Scale(inv)
	var negInv fr.Element
	negInv.Neg(&inv)
	top = append(top, append(r1cs.LC{}, packed...).Scale(negInv)...)
	notTop := r1cs.ConstUint64(1)
	notTop = notTop.SubLC(top)
	api.Enforce(top, notTop, nil)
}
