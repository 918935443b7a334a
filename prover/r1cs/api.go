package r1cs

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Variable names one entry of the assignment. One (= 0) is the constant 1;
// publics are numbered 1, 2, … in creation order; privates carry their private
// index with privateTag set. Variables are plain values: copy them freely.
type Variable uint32

// One is the variable fixed to the constant 1.
const One Variable = 0

// privateTag marks a private (witness) variable; the low bits are its index
// among the privates.
const privateTag Variable = 1 << 31

// IsPrivate reports whether v is a private witness variable.
func (v Variable) IsPrivate() bool { return v&privateTag != 0 }

// Index is v's position among the publics (One = 0) or among the privates.
func (v Variable) Index() int { return int(v &^ privateTag) }

// Term is Coeff·Var.
type Term struct {
	Var   Variable
	Coeff fr.Element
}

// LC is a linear combination Σ Coeff·Var. The zero value is the empty sum (0).
// Methods append and return the result, like the built-in append, so a caller
// can reuse a buffer: lc = lc[:0].Add(x).
type LC []Term

// V returns the linear combination 1·v.
func V(v Variable) LC { return LC{{Var: v, Coeff: fr.One()}} }

// Const returns the linear combination c·One.
func Const(c fr.Element) LC { return LC{{Var: One, Coeff: c}} }

// ConstUint64 returns the linear combination c·One.
func ConstUint64(c uint64) LC {
	var e fr.Element
	e.SetUint64(c)
	return Const(e)
}

// Add returns lc + v.
func (lc LC) Add(v Variable) LC { return append(lc, Term{Var: v, Coeff: fr.One()}) }

// AddTerm returns lc + coeff·v.
func (lc LC) AddTerm(coeff fr.Element, v Variable) LC {
	return append(lc, Term{Var: v, Coeff: coeff})
}

// AddLC returns lc + other.
func (lc LC) AddLC(other LC) LC { return append(lc, other...) }

// Sub returns lc − v.
func (lc LC) Sub(v Variable) LC {
	var m fr.Element
	m.SetOne().Neg(&m)
	return append(lc, Term{Var: v, Coeff: m})
}

// SubLC returns lc − other.
func (lc LC) SubLC(other LC) LC {
	for _, t := range other {
		t.Coeff.Neg(&t.Coeff)
		lc = append(lc, t)
	}
	return lc
}

// Scale multiplies every coefficient of lc by s in place and returns lc.
func (lc LC) Scale(s fr.Element) LC {
	for i := range lc {
		lc[i].Coeff.Mul(&lc[i].Coeff, &s)
	}
	return lc
}

// API is what a circuit sees while it is defined. An API value belongs to one
// Compile or Solve call and is not safe for concurrent use.
type API interface {
	// Public allocates a public input holding value (ignored in shape mode).
	Public(value fr.Element) Variable
	// Private allocates a private witness holding value (ignored in shape mode).
	Private(value fr.Element) Variable
	// Enforce adds the constraint a·b = c. It does not retain a, b or c.
	Enforce(a, b, c LC)
	// Value returns v's value; it is meaningful only when Proving().
	Value(v Variable) fr.Element
	// Eval returns the value of lc; it is meaningful only when Proving().
	Eval(lc LC) fr.Element
	// Proving reports whether values are being computed (proving mode).
	Proving() bool
	// Namespace pushes name onto the path reported with unsatisfied
	// constraints ("sha256/round12/maj"); call the returned pop when done.
	Namespace(name string) (pop func())
}

// Circuit is a relation described through API. Define must allocate and
// enforce the same sequence in both modes: branch on values only to compute
// them, never to choose which constraints exist.
type Circuit interface {
	Define(api API) error
}
