package r1cs

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
	if b, ok := api.(binder); ok {
		return b.bind(lc)
	}
	v := api.Private(api.Eval(lc))
	api.Enforce(lc, V(One), V(v))
	return v
}

// binder is implemented by the proving-mode API, which binds in one step.
type binder interface {
	bind(lc LC) Variable
}

func (s *solver) bind(lc LC) Variable {
	value := s.Eval(lc)
	s.priv = append(s.priv, value)
	s.a = append(s.a, value)
	s.b = append(s.b, montOne)
	s.c = append(s.c, value)
	return Variable(len(s.priv)-1) | privateTag
}
