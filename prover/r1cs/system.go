package r1cs

import (
	"fmt"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Matrix is a sparse matrix in compressed sparse row form: the entries of row
// i are Col[RowPtr[i]:RowPtr[i+1]] with values Coeff[…], columns indexing the
// full assignment w (see System.Column).
type Matrix struct {
	RowPtr []uint32
	Col    []uint32
	Coeff  []fr.Element
}

// Rows is the number of rows of m.
func (m *Matrix) Rows() int { return len(m.RowPtr) - 1 }

// Row returns the columns and coefficients of row i (shared, not copied).
func (m *Matrix) Row(i int) ([]uint32, []fr.Element) {
	lo, hi := m.RowPtr[i], m.RowPtr[i+1]
	return m.Col[lo:hi], m.Coeff[lo:hi]
}

// System is the shape of a circuit: its variable counts and its constraint
// matrices, including the trailing public-input rows input_k · 0 = 0. A
// System is immutable after Compile and safe for concurrent readers.
type System struct {
	// NbPublic counts the public variables, One included.
	NbPublic int
	// NbPrivate counts the private witness variables.
	NbPrivate int
	// NbConstraints counts the circuit's own constraints (without the
	// NbPublic public-input rows).
	NbConstraints int
	// A, B and C have NbConstraints + NbPublic rows each.
	A, B, C Matrix
}

// NbVariables is the length of the full assignment w.
func (s *System) NbVariables() int { return s.NbPublic + s.NbPrivate }

// NbRows is the number of matrix rows: constraints plus public-input rows.
func (s *System) NbRows() int { return s.NbConstraints + s.NbPublic }

// DomainSize is the evaluation domain size: the smallest power of two that
// holds every row.
func (s *System) DomainSize() int { return DomainSize(s.NbConstraints, s.NbPublic) }

// Column maps v to its position in the full assignment w.
func (s *System) Column(v Variable) int { return column(v, s.NbPublic) }

func column(v Variable, nbPublic int) int {
	if v.IsPrivate() {
		return nbPublic + v.Index()
	}
	return v.Index()
}

// DomainSize is the smallest power of two ≥ nbConstraints + nbPublic (at
// least 2, so the domain has a proper generator).
func DomainSize(nbConstraints, nbPublic int) int {
	n := 2
	for n < nbConstraints+nbPublic {
		n <<= 1
	}
	return n
}

// Compile runs c in shape mode and returns its System. Values passed to
// Public and Private are ignored and Value/Eval return zero.
func Compile(c Circuit) (*System, error) {
	b := newShapeBuilder()
	if err := c.Define(b); err != nil {
		return nil, fmt.Errorf("compile circuit %T: %w", c, err)
	}
	sys, err := b.finish()
	if err != nil {
		return nil, fmt.Errorf("compile circuit %T: %w", c, err)
	}
	return sys, nil
}

// shapeBuilder is the API in shape mode: it records matrix rows with raw
// Variables as columns and maps them to assignment columns in finish, once
// the number of publics is known.
type shapeBuilder struct {
	namespaces
	nbPublic, nbPrivate int
	a, b, c             Matrix
}

func newShapeBuilder() *shapeBuilder {
	return &shapeBuilder{
		nbPublic: 1,
		a:        Matrix{RowPtr: []uint32{0}},
		b:        Matrix{RowPtr: []uint32{0}},
		c:        Matrix{RowPtr: []uint32{0}},
	}
}

func (s *shapeBuilder) Public(fr.Element) Variable {
	s.nbPublic++
	return Variable(s.nbPublic - 1)
}

func (s *shapeBuilder) Private(fr.Element) Variable {
	s.nbPrivate++
	return Variable(s.nbPrivate-1) | privateTag
}

func (s *shapeBuilder) Enforce(a, b, c LC) {
	s.a.appendRow(a)
	s.b.appendRow(b)
	s.c.appendRow(c)
}

func (s *shapeBuilder) Value(Variable) fr.Element { return fr.Element{} }
func (s *shapeBuilder) Eval(LC) fr.Element        { return fr.Element{} }
func (s *shapeBuilder) Proving() bool             { return false }

func (m *Matrix) appendRow(lc LC) {
	for _, t := range lc {
		m.Col = append(m.Col, uint32(t.Var))
		m.Coeff = append(m.Coeff, t.Coeff)
	}
	m.RowPtr = append(m.RowPtr, uint32(len(m.Col)))
}

// finish adds the public-input rows and maps raw variables to columns; a
// variable this builder never allocated is an error.
func (s *shapeBuilder) finish() (*System, error) {
	sys := &System{
		NbPublic:      s.nbPublic,
		NbPrivate:     s.nbPrivate,
		NbConstraints: s.a.Rows(),
	}
	one := fr.One()
	for k := 0; k < s.nbPublic; k++ {
		s.a.appendRow(LC{{Var: Variable(k), Coeff: one}})
		s.b.appendRow(nil)
		s.c.appendRow(nil)
	}
	for _, m := range []*Matrix{&s.a, &s.b, &s.c} {
		for i, raw := range m.Col {
			v := Variable(raw)
			if (v.IsPrivate() && v.Index() >= s.nbPrivate) || (!v.IsPrivate() && v.Index() >= s.nbPublic) {
				return nil, fmt.Errorf("unknown variable %#x in matrix entry %d", raw, i)
			}
			m.Col[i] = uint32(column(v, s.nbPublic))
		}
	}
	sys.A, sys.B, sys.C = s.a, s.b, s.c
	return sys, nil
}

// namespaces keeps the namespace path without allocating per push: the pop
// function for each depth is created once and reused.
type namespaces struct {
	path []string
	pops []func()
}

func (n *namespaces) Namespace(name string) func() {
	d := len(n.path)
	n.path = append(n.path, name)
	for len(n.pops) <= d {
		depth := len(n.pops)
		n.pops = append(n.pops, func() { n.path = n.path[:depth] })
	}
	return n.pops[d]
}

func (n *namespaces) pathString() string { return strings.Join(n.path, "/") }
