package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
)

// magic opens the exchange file that bench/prover writes (its export.go is
// the writer and documents the layout; this is the only reader).
var magic = [4]byte{'C', 'Z', 'R', '1'}

// maxCount bounds every count in the header, so a damaged file fails
// cleanly instead of asking for terabytes.
const maxCount = 1 << 30

// exported is one circuit as bench/prover wrote it: the constraint
// matrices of the circuit's own rows (without cuzk's public-input rows,
// which gnark's setup replaces by its own handling of publics) and the full
// assignment w = (1, publics…, privates…).
type exported struct {
	nbPublic, nbPrivate, nbConstraints int
	coeffs                             []fr.Element
	a, b, c                            matrix
	w                                  []fr.Element
	shapeID                            [32]byte // SHA-256 of everything before w
}

// matrix is one CSR matrix over columns of w.
type matrix struct {
	rowPtr, col, coeffID []uint32
}

// readExported decodes the exchange file and checks every index.
func readExported(r io.Reader) (*exported, error) {
	h := sha256.New()
	br := bufio.NewReaderSize(r, 1<<20)
	tee := io.TeeReader(br, h)
	var head [4]byte
	if _, err := io.ReadFull(tee, head[:]); err != nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	if head != magic {
		return nil, fmt.Errorf("read header: magic %q, want %q", head[:], magic[:])
	}
	counts, err := readU32s(tee, 4)
	if err != nil {
		return nil, fmt.Errorf("read counts: %w", err)
	}
	for _, n := range counts {
		if n > maxCount {
			return nil, fmt.Errorf("read counts: %d exceeds %d", n, maxCount)
		}
	}
	e := &exported{nbPublic: int(counts[0]), nbPrivate: int(counts[1]), nbConstraints: int(counts[2])}
	if e.nbPublic < 1 {
		return nil, errors.New("read counts: no public variable (the constant 1 is one)")
	}
	if e.coeffs, err = readElements(tee, int(counts[3])); err != nil {
		return nil, fmt.Errorf("read coefficients: %w", err)
	}
	for i, m := range []*matrix{&e.a, &e.b, &e.c} {
		if *m, err = readMatrix(tee, e); err != nil {
			return nil, fmt.Errorf("read matrix %c: %w", "ABC"[i], err)
		}
	}
	copy(e.shapeID[:], h.Sum(nil))
	if e.w, err = readElements(br, e.nbPublic+e.nbPrivate); err != nil {
		return nil, fmt.Errorf("read assignment: %w", err)
	}
	if !e.w[0].IsOne() {
		return nil, errors.New("read assignment: w[0] is not 1")
	}
	return e, nil
}

func readU32s(r io.Reader, n int) ([]uint32, error) {
	out := make([]uint32, n)
	return out, binary.Read(r, binary.LittleEndian, out)
}

func readElements(r io.Reader, n int) ([]fr.Element, error) {
	out := make([]fr.Element, n)
	var buf [fr.Bytes]byte
	for i := range out {
		if _, err := io.ReadFull(r, buf[:]); err != nil {
			return nil, err
		}
		if err := out[i].SetBytesCanonical(buf[:]); err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
	}
	return out, nil
}

func readMatrix(r io.Reader, e *exported) (matrix, error) {
	nt, err := readU32s(r, 1)
	if err != nil {
		return matrix{}, err
	}
	if nt[0] > maxCount {
		return matrix{}, fmt.Errorf("%d terms exceed %d", nt[0], maxCount)
	}
	var m matrix
	if m.rowPtr, err = readU32s(r, e.nbConstraints+1); err != nil {
		return matrix{}, err
	}
	if m.col, err = readU32s(r, int(nt[0])); err != nil {
		return matrix{}, err
	}
	if m.coeffID, err = readU32s(r, int(nt[0])); err != nil {
		return matrix{}, err
	}
	if m.rowPtr[0] != 0 || m.rowPtr[e.nbConstraints] != nt[0] {
		return matrix{}, errors.New("row pointers do not span the terms")
	}
	for i := range e.nbConstraints {
		if m.rowPtr[i] > m.rowPtr[i+1] {
			return matrix{}, fmt.Errorf("row %d: pointers decrease", i)
		}
	}
	nbVars := uint32(e.nbPublic + e.nbPrivate)
	for k := range m.col {
		if m.col[k] >= nbVars || int(m.coeffID[k]) >= len(e.coeffs) {
			return matrix{}, fmt.Errorf("term %d: column %d or coefficient %d out of range", k, m.col[k], m.coeffID[k])
		}
	}
	return m, nil
}

// row returns row i's terms.
func (m *matrix) row(i int) (cols, ids []uint32) {
	lo, hi := m.rowPtr[i], m.rowPtr[i+1]
	return m.col[lo:hi], m.coeffID[lo:hi]
}

// wireKind is how a private column of w becomes a gnark wire.
type wireKind uint8

const (
	secretWire   wireKind = iota // given in the witness
	internalWire                 // computed by gnark's solver
)

// classify decides, the way gnark's frontend lays out a circuit, which
// private columns gnark's solver computes. gnark solves constraints in order
// and computes at most one unknown wire per constraint; in a frontend
// circuit that unknown is a multiplication's output, a single term in C,
// while the other wires a row meets first are inputs or hint outputs, known
// before solving starts. So in each row, of the private columns seen there
// for the first time, the first that occurs exactly once in the row and in
// C with a nonzero coefficient becomes an internal wire (solved: one
// a·b − c per wire, as for gnark's api.Mul outputs); the others, and columns
// that never appear, are secret inputs, which in a gnark circuit would be
// inputs or hint outputs (bit decompositions). Either way a column sits in
// the same MSMs, so the proving work is unchanged; only the solver's share
// moves.
func classify(e *exported) []wireKind {
	kinds := make([]wireKind, e.nbPrivate) // secretWire unless chosen below
	seen := make([]bool, e.nbPrivate)
	var fresh []freshTerm
	for i := range e.nbConstraints {
		fresh = fresh[:0]
		for mi, m := range []*matrix{&e.a, &e.b, &e.c} {
			cols, ids := m.row(i)
			for k, col := range cols {
				if p := int(col) - e.nbPublic; p >= 0 && !seen[p] {
					fresh = append(fresh, freshTerm{p, mi == 2 && !e.coeffs[ids[k]].IsZero()})
				}
			}
		}
		if p, ok := solvable(fresh); ok {
			kinds[p] = internalWire
		}
		for _, t := range fresh {
			seen[t.p] = true
		}
	}
	return kinds
}

// freshTerm is one term of a row whose private column was not seen before.
type freshTerm struct {
	p   int  // private index
	inC bool // in C with a nonzero coefficient
}

// solvable returns the first column of fresh that is in C and occurs once
// in the row.
func solvable(fresh []freshTerm) (int, bool) {
	for _, t := range fresh {
		if !t.inC {
			continue
		}
		n := 0
		for _, u := range fresh {
			if u.p == t.p {
				n++
			}
		}
		if n == 1 {
			return t.p, true
		}
	}
	return 0, false
}

// system is the gnark side of one exported circuit.
type system struct {
	ccs      *cs.R1CS
	full     witness.Witness
	public   witness.Witness
	nbSecret int
}

// build lays e out as a gnark R1CS with the same rows and terms, the
// columns renumbered into gnark's order (publics, secrets, internals), and
// the matching full and public witnesses.
func build(e *exported) (*system, error) {
	kinds := classify(e)
	nbSecret := 0
	for _, k := range kinds {
		if k == secretWire {
			nbSecret++
		}
	}
	ccs := cs.NewR1CS(e.nbConstraints)
	for i := range e.nbPublic {
		ccs.AddPublicVariable(fmt.Sprintf("p%d", i)) // wire 0 is gnark's constant 1 as well as ours
	}
	wire := make([]int, e.nbPublic+e.nbPrivate)
	for i := range e.nbPublic {
		wire[i] = i
	}
	for p, k := range kinds {
		if k == secretWire {
			wire[e.nbPublic+p] = ccs.AddSecretVariable(fmt.Sprintf("s%d", p))
		}
	}
	addRows(ccs, e, kinds, wire)
	s := &system{ccs: ccs, nbSecret: nbSecret}
	var err error
	if s.full, err = fillWitness(e, kinds, nbSecret); err != nil {
		return nil, err
	}
	if s.public, err = s.full.Public(); err != nil {
		return nil, fmt.Errorf("public witness: %w", err)
	}
	return s, nil
}

// addRows adds every row as a generic R1C, creating each internal wire just
// before the row that computes it.
func addRows(ccs *cs.R1CS, e *exported, kinds []wireKind, wire []int) {
	bp := ccs.AddBlueprint(&constraint.BlueprintGenericR1C{})
	coeffs := make([]constraint.U64, len(e.coeffs))
	for i := range e.coeffs {
		copy(coeffs[i][:], e.coeffs[i][:]) // Montgomery limbs first, as gnark's CoeffTable reads them
	}
	created := make([]bool, e.nbPrivate)
	lin := func(m *matrix, i int) constraint.LinearExpression {
		cols, ids := m.row(i)
		out := make(constraint.LinearExpression, len(cols))
		for k, col := range cols {
			if p := int(col) - e.nbPublic; p >= 0 && kinds[p] == internalWire && !created[p] {
				wire[col], created[p] = ccs.AddInternalVariable(), true
			}
			out[k] = ccs.MakeTerm(coeffs[ids[k]], wire[col])
		}
		return out
	}
	for i := range e.nbConstraints {
		ccs.AddR1C(constraint.R1C{L: lin(&e.a, i), R: lin(&e.b, i), O: lin(&e.c, i)}, bp)
	}
}

// fillWitness returns gnark's full witness: the publics without the
// constant, then the secret columns in order.
func fillWitness(e *exported, kinds []wireKind, nbSecret int) (witness.Witness, error) {
	w, err := witness.New(ecc.BLS12_381.ScalarField())
	if err != nil {
		return nil, fmt.Errorf("witness: %w", err)
	}
	ch := make(chan any)
	go func() {
		defer close(ch)
		for i := 1; i < e.nbPublic; i++ {
			ch <- e.w[i]
		}
		for p, k := range kinds {
			if k == secretWire {
				ch <- e.w[e.nbPublic+p]
			}
		}
	}()
	if err := w.Fill(e.nbPublic-1, nbSecret, ch); err != nil {
		return nil, fmt.Errorf("witness: %w", err)
	}
	return w, nil
}
