package r1cs

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Assignment is the output of proving mode: the full assignment and the
// constraint evaluation vectors. It is plain data, owned by the caller.
type Assignment struct {
	// Public holds w_0 = 1 followed by the public inputs.
	Public []fr.Element
	// Private holds the witness values in creation order.
	Private []fr.Element
	// A, B and C hold a_i = <A_i, w>, b_i and c_i for every constraint, then
	// the public-input rows (a = input_k, b = c = 0), then zeros up to
	// DomainSize(NbConstraints, len(Public)).
	A, B, C []fr.Element
	// NbConstraints counts the circuit's own constraints.
	NbConstraints int
	// Wires, when not nil, is the memory of Public followed by Private as
	// one vector: Public is its start and Private the rest. Solve sets it
	// when it allocates both (WithShape) or solves into buffers laid out so
	// (WithBuffers of an Assignment with Wires), so that a prover reads
	// the wire vector without copying it (WireVector).
	Wires []fr.Element
}

// PublicInputs returns the public inputs without the leading constant 1, in
// the order a verifier expects them.
func (a *Assignment) PublicInputs() []fr.Element { return a.Public[1:] }

// WireVector returns Public‖Private as one vector without copying (Wires),
// or nil when Wires is nil or Public and Private do not lie in it so.
func (a *Assignment) WireVector() []fr.Element {
	w, np := a.Wires, len(a.Public)
	if np == 0 || len(w) != np+len(a.Private) || &w[0] != &a.Public[0] ||
		(len(a.Private) > 0 && &w[np] != &a.Private[0]) {
		return nil
	}
	return w
}

// UnsatisfiedError reports the first constraint whose values violate
// a·b = c during Solve.
type UnsatisfiedError struct {
	Index   int    // constraint index, in Enforce order
	Path    string // namespace path at Enforce time, "" at top level
	A, B, C fr.Element
}

func (e *UnsatisfiedError) Error() string {
	where := e.Path
	if where == "" {
		where = "<top>"
	}
	return fmt.Sprintf("constraint %d (%s) not satisfied: %s · %s ≠ %s",
		e.Index, where, e.A.String(), e.B.String(), e.C.String())
}

// ErrShapeMismatch means a circuit allocated or enforced differently in
// proving mode than the System it was checked against.
var ErrShapeMismatch = errors.New("assignment does not match circuit shape")

// SolveOption configures Solve.
type SolveOption func(*solveConfig) error

type solveConfig struct {
	shape   *System
	reuse   *Assignment
	workers int
	lcRows  bool
}

// WithWorkers sets how many goroutines solve a circuit's segments (see
// Parallel) concurrently; n ≥ 1, default runtime.GOMAXPROCS(0). With n = 1
// Solve runs the whole circuit on the calling goroutine, segments in order.
// Every n gives the same assignment.
func WithWorkers(n int) SolveOption {
	return func(c *solveConfig) error {
		if n < 1 {
			return fmt.Errorf("WithWorkers: %d workers, want at least 1", n)
		}
		c.workers = n
		return nil
	}
}

// WithCombinationRows makes every row go through its linear combinations:
// Direct returns nil, so gadgets that would pass a row's values (Direct)
// build and enforce the combinations instead. The assignment must be the
// same element by element; tests solve both ways to check a gadget's
// direct values against its combinations.
func WithCombinationRows() SolveOption {
	return func(c *solveConfig) error {
		c.lcRows = true
		return nil
	}
}

// WithBuffers makes Solve build its result in prev's storage (its slices
// are truncated and refilled), saving the allocation of the large vectors
// when one worker solves the same shape repeatedly. prev must not be used
// afterwards; Solve may return prev itself.
func WithBuffers(prev *Assignment) SolveOption {
	return func(c *solveConfig) error {
		if prev == nil {
			return errors.New("WithBuffers: nil assignment")
		}
		c.reuse = prev
		return nil
	}
}

// WithShape sizes the output vectors exactly for sys up front and makes Solve
// fail with ErrShapeMismatch if the circuit's counts differ from sys.
func WithShape(sys *System) SolveOption {
	return func(c *solveConfig) error {
		if sys == nil {
			return errors.New("WithShape: nil system")
		}
		c.shape = sys
		return nil
	}
}

// Solve runs c in proving mode and returns the assignment and the a, b, c
// evaluation vectors. Every constraint is checked as it is enforced; the
// first unsatisfied one is returned as an *UnsatisfiedError (wrapped).
// Define runs on the calling goroutine; the segments it passes to Parallel
// run on up to WithWorkers goroutines. Calls of Solve may run concurrently
// as long as they share no WithBuffers assignment; c's Define and its
// segments must then be safe for concurrent use too.
func Solve(c Circuit, opts ...SolveOption) (*Assignment, error) {
	cfg := solveConfig{workers: runtime.GOMAXPROCS(0)}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, fmt.Errorf("solve: %w", err)
		}
	}
	s := newSolver(cfg.shape, cfg.reuse)
	s.workers, s.lcRows = cfg.workers, cfg.lcRows
	if err := c.Define(s); err != nil {
		return nil, fmt.Errorf("solve circuit %T: %w", c, err)
	}
	if s.failed != nil {
		return nil, fmt.Errorf("solve circuit %T: %w", c, s.failed)
	}
	asg := s.finish()
	if sh := cfg.shape; sh != nil && (sh.NbConstraints != asg.NbConstraints ||
		sh.NbPublic != len(asg.Public) || sh.NbPrivate != len(asg.Private)) {
		return nil, fmt.Errorf("solve circuit %T: %w: got %d constraints, %d public, %d private; want %d, %d, %d",
			c, ErrShapeMismatch, asg.NbConstraints, len(asg.Public), len(asg.Private),
			sh.NbConstraints, sh.NbPublic, sh.NbPrivate)
	}
	return asg, nil
}

// solver is the API in proving mode. A segment's solver (bounded) writes
// into a fixed range of its parent's vectors: they never grow past their
// capacity, and what would (a segment larger than it declared) is only
// counted in over.
type solver struct {
	namespaces
	pub, priv []fr.Element
	a, b, c   []fr.Element
	failed    *UnsatisfiedError
	workers   int          // goroutines for Parallel's segments
	lcRows    bool         // WithCombinationRows: Direct returns nil
	wires     []fr.Element // the memory pub and priv start in as one vector, or nil

	bounded bool
	over    counts // allocations past a bounded solver's ranges
	hidden  span   // private variables of other segments, not to be read
	foreign bool   // a hidden variable was read
	zero    fr.Element
}

// span is the private variable indices [lo, lo+n).
type span struct{ lo, n uint32 }

func (h span) holds(k uint32) bool { return k-h.lo < h.n }

func newSolver(shape *System, reuse *Assignment) *solver {
	s := &solver{pub: make([]fr.Element, 1, 8)}
	switch {
	case reuse != nil:
		s.pub = append(reuse.Public[:0], fr.Element{})
		s.priv = reuse.Private[:0]
		s.a, s.b, s.c = reuse.A[:0], reuse.B[:0], reuse.C[:0]
		s.wires = reuse.Wires
	case shape != nil:
		n := shape.DomainSize()
		// Public‖Private in one vector, Public capped so that it never
		// grows into Private (an append past it moves it elsewhere).
		np := max(shape.NbPublic, 1)
		s.wires = make([]fr.Element, np+shape.NbPrivate)
		s.pub, s.priv = s.wires[:1:np], s.wires[np:np]
		s.a = make([]fr.Element, 0, n)
		s.b = make([]fr.Element, 0, n)
		s.c = make([]fr.Element, 0, n)
	}
	s.pub[0].SetOne()
	return s
}

func (s *solver) Public(value fr.Element) Variable {
	if s.bounded { // a segment allocates no public inputs
		s.over.public++
		return One
	}
	s.pub = append(s.pub, value)
	return Variable(len(s.pub) - 1)
}

func (s *solver) Private(value fr.Element) Variable {
	if s.bounded && len(s.priv) == cap(s.priv) {
		s.over.private++
		return s.overIndex()
	}
	s.priv = append(s.priv, value)
	return Variable(len(s.priv)-1) | privateTag
}

// overflows reports whether one more row, and with private one more private
// variable, would pass a bounded solver's ranges; if so it counts them in
// over instead.
func (s *solver) overflows(private bool) bool {
	if !s.bounded || (len(s.a) < cap(s.a) && (!private || len(s.priv) < cap(s.priv))) {
		return false
	}
	s.over.constraints++
	if private {
		s.over.private++
	}
	return true
}

// overIndex is the index of the last private variable counted in over: past
// the vector's end, so that no read can reach it.
func (s *solver) overIndex() Variable {
	return Variable(len(s.priv)+s.over.private-1) | privateTag
}

func (s *solver) Proving() bool { return true }

func (s *solver) Value(v Variable) fr.Element {
	if v&privateTag != 0 {
		if k := uint32(v &^ privateTag); s.hidden.holds(k) {
			return *s.readHidden()
		}
		return s.priv[v&^privateTag]
	}
	return s.pub[v]
}

// readHidden records a read of another segment's variable and returns zero.
func (s *solver) readHidden() *fr.Element {
	s.foreign = true
	s.zero = fr.Element{}
	return &s.zero
}

// montOne is 1 in Montgomery form, compared against coefficients to skip
// the multiplication for the most common coefficient.
var montOne = fr.One()

func (s *solver) Eval(lc LC) fr.Element {
	var acc, t fr.Element
	pub, priv, hidden := s.pub, s.priv, s.hidden
	for i := range lc {
		term := &lc[i]
		var x *fr.Element
		if term.Var&privateTag != 0 {
			if k := uint32(term.Var &^ privateTag); hidden.holds(k) {
				x = s.readHidden()
			} else {
				x = &priv[k]
			}
		} else {
			x = &pub[term.Var]
		}
		switch {
		case x.IsZero(): // half the wires of a bit-heavy witness
		case term.Coeff == montOne:
			acc.Add(&acc, x)
		case *x == montOne:
			acc.Add(&acc, &term.Coeff)
		default:
			t.Mul(x, &term.Coeff)
			acc.Add(&acc, &t)
		}
	}
	return acc
}

// mulSmall sets z = x·y, skipping the multiplication when a factor is 0 or
// 1 (most factors of a bit-heavy witness): the same element either way.
func mulSmall(z, x, y *fr.Element) {
	switch {
	case x.IsZero() || y.IsZero():
		*z = fr.Element{}
	case *x == montOne:
		*z = *y
	case *y == montOne:
		*z = *x
	default:
		z.Mul(x, y)
	}
}

func (s *solver) Enforce(a, b, c LC) {
	va, vc := s.Eval(a), s.Eval(c)
	vb := va
	if !sameLC(a, b) { // squares pass one slice twice: evaluate it once
		vb = s.Eval(b)
	}
	s.EnforceValues(&va, &vb, &vc)
}

// EnforceValues implements Rows: the row Enforce adds for combinations
// evaluating to va, vb, vc, checked the same way.
func (s *solver) EnforceValues(va, vb, vc *fr.Element) {
	if s.overflows(false) {
		return
	}
	if s.failed == nil {
		var ab fr.Element
		mulSmall(&ab, va, vb)
		if ab != *vc {
			s.failed = &UnsatisfiedError{Index: len(s.a), Path: s.pathString(), A: *va, B: *vb, C: *vc}
		}
	}
	s.push(va, vb, vc)
}

// push appends one row's values (every row's one way in: Enforce,
// EnforceValues, Bind, Product).
func (s *solver) push(va, vb, vc *fr.Element) {
	s.a = append(s.a, *va)
	s.b = append(s.b, *vb)
	s.c = append(s.c, *vc)
}

// sameLC reports whether a and b are the same slice (same terms in memory).
func sameLC(a, b LC) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// finish appends the public-input rows and zero-pads to the domain size.
func (s *solver) finish() *Assignment {
	nbCons := len(s.a)
	n := DomainSize(nbCons, len(s.pub))
	s.a = append(s.a, s.pub...)
	s.a = padTo(s.a, n)
	s.b = padTo(s.b, n)
	s.c = padTo(s.c, n)
	asg := &Assignment{
		Public: s.pub, Private: s.priv,
		A: s.a, B: s.b, C: s.c,
		NbConstraints: nbCons,
	}
	if n := len(s.pub) + len(s.priv); n <= len(s.wires) {
		asg.Wires = s.wires[:n]
		asg.Wires = asg.WireVector() // nil when a vector grew out of it
	}
	return asg
}

func padTo(v []fr.Element, n int) []fr.Element {
	if cap(v) >= n {
		old := len(v)
		v = v[:n]
		clear(v[old:])
		return v
	}
	out := make([]fr.Element, n)
	copy(out, v)
	return out
}
