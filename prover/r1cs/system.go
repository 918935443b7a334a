package r1cs

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Matrix is a sparse matrix in compressed sparse row form: the entries of row
// i are at positions RowPtr[i] to RowPtr[i+1] of Col (columns of the full
// assignment w, see System.Column) and CoeffID (indices into the System's
// coefficient table). Circuits reuse few distinct coefficients, so the table
// keeps a term at 8 bytes instead of 36.
type Matrix struct {
	RowPtr  []uint32
	Col     []uint32
	CoeffID []uint32
}

// Rows is the number of rows of m.
func (m *Matrix) Rows() int { return len(m.RowPtr) - 1 }

// Row returns the columns and coefficient ids of row i (shared, not copied).
func (m *Matrix) Row(i int) (cols, coeffIDs []uint32) {
	lo, hi := m.RowPtr[i], m.RowPtr[i+1]
	return m.Col[lo:hi], m.CoeffID[lo:hi]
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
	// Coeffs is the coefficient table of A, B and C; Coeffs[0] = 1.
	Coeffs []fr.Element
	// Columns is, in Counts form, the column densities when they are known
	// without matrices (a counting pass, or a circuit that derives them):
	// each count at least the compiled System's Density. nil: unknown.
	Columns *Density
}

// Counts returns a System with s's counts and no matrices: enough for
// Solve's WithShape and for sizing, not for a setup. A key held for proving
// keeps this instead of the matrices (about 11 GB at 2^27).
func (s *System) Counts() *System {
	return &System{NbPublic: s.NbPublic, NbPrivate: s.NbPrivate, NbConstraints: s.NbConstraints, Columns: s.Columns}
}

// AssignmentBytes is the host memory of one solve of s: the wire vector
// and the a, b, c evaluation vectors, fr.Bytes an element.
func (s *System) AssignmentBytes() int64 {
	return int64(s.NbVariables()+3*s.DomainSize()) * fr.Bytes
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
func Compile(c Circuit) (*System, error) { return CompileWorkers(c, runtime.GOMAXPROCS(0)) }

// CompileWorkers is Compile with the segments of Parallel compiled on up to
// workers goroutines (1: in turn). The System is the same for every worker
// count, matrices and coefficient ids included.
func CompileWorkers(c Circuit, workers int) (*System, error) {
	b := newShapeBuilder()
	b.workers = max(1, workers)
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
	workers             int // goroutines for Parallel's segments
	nbPublic, nbPrivate int
	a, b, c             matrixBuilder
	coeffs              coeffTable
}

func newShapeBuilder() *shapeBuilder {
	s := &shapeBuilder{nbPublic: 1}
	s.coeffs.id(fr.One())
	return s
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
	s.a.appendRow(a, &s.coeffs)
	s.b.appendRow(b, &s.coeffs)
	s.c.appendRow(c, &s.coeffs)
}

func (s *shapeBuilder) Value(Variable) fr.Element { return fr.Element{} }
func (s *shapeBuilder) Eval(LC) fr.Element        { return fr.Element{} }
func (s *shapeBuilder) Proving() bool             { return false }

// finish adds the public-input rows and builds the matrices; a variable this
// builder never allocated is an error.
func (s *shapeBuilder) finish() (*System, error) {
	sys := &System{
		NbPublic:      s.nbPublic,
		NbPrivate:     s.nbPrivate,
		NbConstraints: s.a.rows,
	}
	one := fr.One()
	for k := 0; k < s.nbPublic; k++ {
		s.a.appendRow(LC{{Var: Variable(k), Coeff: one}}, &s.coeffs)
		s.b.appendRow(nil, &s.coeffs)
		s.c.appendRow(nil, &s.coeffs)
	}
	sys.Coeffs = s.coeffs.values
	err := buildMatrices([3]*Matrix{&sys.A, &sys.B, &sys.C}, [3]*matrixBuilder{&s.a, &s.b, &s.c},
		s.nbPublic, s.nbPrivate, s.workers)
	if err != nil {
		return nil, err
	}
	return sys, nil
}

// coeffTable interns coefficients: each distinct value gets one id.
type coeffTable struct {
	ids    map[fr.Element]uint32
	values []fr.Element
}

func (t *coeffTable) id(c fr.Element) uint32 {
	if len(t.values) > 0 && c == t.values[0] {
		return 0 // the common coefficient 1, without a map lookup
	}
	if id, ok := t.ids[c]; ok {
		return id
	}
	if t.ids == nil {
		t.ids = make(map[fr.Element]uint32)
	}
	id := uint32(len(t.values))
	t.ids[c] = id
	t.values = append(t.values, c)
	return id
}

// chunkTerms is the largest chunk of a matrixBuilder, in terms: large enough
// to amortize, small enough that growing never copies much.
const chunkTerms = 1 << 16

// matrixBuilder collects rows in fixed-size chunks, so building a matrix
// copies each term once (into the final arrays) instead of on every growth
// of one huge slice.
type matrixBuilder struct {
	ends [][]uint32   // running term count after each row, chunked
	cols [][]Variable // raw variables, chunked
	ids  [][]uint32   // coefficient ids, chunked alike
	n    int          // terms so far
	rows int          // rows so far
}

// chunk returns a slice of capacity for the next chunk of a builder that
// holds n entries so far: small circuits get small chunks, large ones
// chunks of up to chunkTerms, so no vector is regrown and copied (growing
// one slice per matrix, copied at every growth, was the largest cost of a
// large compile after the terms themselves).
func chunk[T any](n int) []T { return make([]T, 0, min(chunkTerms, max(256, n))) }

func (m *matrixBuilder) appendRow(lc LC, coeffs *coeffTable) {
	for i := range lc {
		if k := len(m.cols) - 1; k < 0 || len(m.cols[k]) == cap(m.cols[k]) {
			m.cols = append(m.cols, chunk[Variable](m.n))
			m.ids = append(m.ids, chunk[uint32](m.n))
		}
		k := len(m.cols) - 1
		m.cols[k] = append(m.cols[k], lc[i].Var)
		m.ids[k] = append(m.ids[k], coeffs.id(lc[i].Coeff))
		m.n++
	}
	if k := len(m.ends) - 1; k < 0 || len(m.ends[k]) == cap(m.ends[k]) {
		m.ends = append(m.ends, chunk[uint32](m.rows))
	}
	k := len(m.ends) - 1
	m.ends[k] = append(m.ends[k], uint32(m.n))
	m.rows++
}

// buildMatrices flattens the builders' chunks into CSR form with assignment
// columns, the chunks of all three matrices spread over workers goroutines
// (each chunk lands at its own offset, so the result is the same for every
// worker count); a variable the builder never allocated is an error, the
// first in matrix and entry order.
func buildMatrices(dst [3]*Matrix, src [3]*matrixBuilder, nbPublic, nbPrivate, workers int) error {
	type task struct {
		m, k, off int
		err       error
	}
	var tasks []task
	for m, b := range src {
		*dst[m] = Matrix{
			RowPtr:  make([]uint32, 1, b.rows+1),
			Col:     make([]uint32, b.n),
			CoeffID: make([]uint32, b.n),
		}
		for _, ends := range b.ends {
			dst[m].RowPtr = append(dst[m].RowPtr, ends...)
		}
		off := 0
		for k := range b.cols {
			tasks = append(tasks, task{m: m, k: k, off: off})
			off += len(b.cols[k])
		}
	}
	run := func(t *task) {
		out, cols := dst[t.m], src[t.m].cols[t.k]
		copy(out.CoeffID[t.off:], src[t.m].ids[t.k])
		col := out.Col[t.off : t.off+len(cols)]
		for j, v := range cols {
			if (v.IsPrivate() && v.Index() >= nbPrivate) || (!v.IsPrivate() && v.Index() >= nbPublic) {
				t.err = fmt.Errorf("unknown variable %#x in matrix entry %d", uint32(v), t.off+j)
				return
			}
			col[j] = uint32(column(v, nbPublic))
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(max(1, workers), len(tasks)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(tasks); i = int(next.Add(1) - 1) {
				run(&tasks[i])
			}
		})
	}
	wg.Wait()
	for i := range tasks {
		if tasks[i].err != nil {
			return tasks[i].err
		}
	}
	return nil
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
