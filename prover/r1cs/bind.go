package r1cs

import "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

// Bind allocates a private variable v holding the value of lc and enforces
// lc · 1 = v, one constraint. Binding a long combination that is used more
// than once makes every later use cost one term instead of len(lc).
//
// Bind behaves exactly like
//
//	v := api.Private(api.Eval(lc))
//	api.Enforce(lc, V(One), V(v))
//
// (same variable, same constraint row), but in proving mode it evaluates lc
// once instead of twice: the constraint holds by construction, so there is
// nothing to check. An API that wraps another (for example to tamper with
// witnesses in tests) gets the plain sequence above, through its own
// Private and Enforce.
func Bind(api API, lc LC) Variable {
	if s, ok := api.(oneStep); ok {
		return s.bind(lc)
	}
	v := api.Private(api.Eval(lc))
	api.Enforce(lc, V(One), V(v))
	return v
}

// Product allocates a private variable v holding a·b and enforces
// a · b = v, one constraint. Like Bind it stands for the plain sequence
//
//	v := api.Private(api.Eval(a) · api.Eval(b))
//	api.Enforce(a, b, V(v))
//
// but in proving mode evaluates each factor once (a factor passed twice,
// the same slice, once in all) and multiplies once, with nothing to check.
func Product(api API, a, b LC) Variable {
	if s, ok := api.(oneStep); ok {
		return s.product(a, b)
	}
	va, vb := api.Eval(a), api.Eval(b)
	var ab fr.Element
	ab.Mul(&va, &vb)
	v := api.Private(ab)
	api.Enforce(a, b, V(v))
	return v
}

// oneStep is implemented by the proving-mode API, which allocates and
// enforces in one step.
type oneStep interface {
	bind(lc LC) Variable
	product(a, b LC) Variable
}

func (s *solver) bind(lc LC) Variable {
	value := s.Eval(lc)
	if s.overflows(true) {
		return s.overIndex()
	}
	s.priv = append(s.priv, value)
	s.push(&value, &montOne, &value)
	return Variable(len(s.priv)-1) | privateTag
}

func (s *solver) product(a, b LC) Variable {
	va := s.Eval(a)
	vb := va
	if !sameLC(a, b) {
		vb = s.Eval(b)
	}
	var ab fr.Element
	mulSmall(&ab, &va, &vb)
	if s.overflows(true) {
		return s.overIndex()
	}
	s.priv = append(s.priv, ab)
	s.push(&va, &vb, &ab)
	return Variable(len(s.priv)-1) | privateTag
}
