package keys

import (
	"context"
	"fmt"
	"math/bits"
	"path/filepath"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Shape is what a circuit's requests will need, known before any compile:
// its counts (r1cs.System.Counts' form) and, when a counting pass found
// them, the terms of its three matrices (0: unknown).
type Shape struct {
	Sys   *r1cs.System
	Terms int64
}

// KeyBytes is the host size of the shape's proving key (EstimateBytes).
func (s Shape) KeyBytes() int64 { return EstimateBytes(s.Sys) }

// VectorBytes is the host memory of one solve (the wire vector and the
// three evaluation vectors).
func (s Shape) VectorBytes() int64 { return s.Sys.AssignmentBytes() }

// SetupBytes is the scalar vectors a development setup of the shape holds
// at once beside its compile (groth16.KeySize.SetupScratchBytes).
func (s Shape) SetupBytes() int64 { return EstimateSize(s.Sys).SetupScratchBytes() }

// LoadBytes is the host memory an Acquire of c (of shape sh) would add
// now, at its peak: nothing when the key is loaded or loading already (the
// Acquire joins it); the key alone from a production key file; for a
// development key, the key, its compile and the setup's scalars. A
// development key's files are named by its compiled shape, so whether they
// are there (a map instead of a setup) is not known before the compile:
// the setup is counted.
func (m *Manager) LoadBytes(c *registry.Resolved, sh Shape) int64 {
	m.mu.Lock()
	_, held := m.entries[c.Key]
	m.mu.Unlock()
	if held {
		return 0
	}
	if !m.Development(c) {
		return sh.KeyBytes()
	}
	return sh.KeyBytes() + sh.CompileBytes() + sh.SetupBytes()
}

// Development reports whether a load of c's key would make a development
// key: no production key file of it (<name>.rawpk or <name>.pk) in the key
// directory, and development keys allowed.
func (m *Manager) Development(c *registry.Resolved) bool {
	base := filepath.Join(m.cfg.Dir, FileName(c.Key))
	return !m.cfg.NoGenerate && !fileExists(base+RawExt) && !fileExists(base+".pk")
}

// termsPerConstraint stands for a circuit's matrix terms when only its
// counts are known (porep-synth has about 6).
const termsPerConstraint = 7

// CompileBytes bounds the heap a compile of the shape allocates (its
// builders and the matrices it keeps until a development setup has summed
// them): measured on porep-synth, sha256 and poseidon-merkle at 2^14..2^25
// constraints as 20-46 bytes a term plus a fixed part; this takes 24 bytes a
// term, 48 a constraint and 8 MiB.
func (s Shape) CompileBytes() int64 {
	terms := s.Terms
	if terms == 0 {
		terms = termsPerConstraint * int64(s.Sys.NbConstraints)
	}
	return 24*terms + 48*int64(s.Sys.NbConstraints) + 8<<20
}

// Shape returns c's shape without compiling it: the circuit's own counts
// when it knows them (registry.Resolved.Counts), else a counting pass (its
// Define through an API that counts and stores nothing, a tenth of a
// compile's time, no matrices), done once per shape and remembered. The
// pass belongs to no caller: it runs to its end on its own goroutine, and
// a caller whose ctx ends stops waiting for it.
func (m *Manager) Shape(ctx context.Context, c *registry.Resolved) (Shape, error) {
	if sys, known, err := c.Counts(); err != nil || known {
		return Shape{Sys: sys}, err
	}
	m.mu.Lock()
	s, ok := m.shapes[c.Key]
	if !ok {
		s = &shapeEntry{done: make(chan struct{})}
		m.shapes[c.Key] = s
		go m.count(s, c)
	}
	m.mu.Unlock()
	select {
	case <-s.done:
	case <-ctx.Done():
		return Shape{}, fmt.Errorf("shape of %s: %w", c.Key, ctx.Err())
	}
	return s.shape, s.err
}

// shapeEntry is one counting pass, shared by its callers.
type shapeEntry struct {
	done  chan struct{}
	shape Shape
	err   error
}

func (m *Manager) count(s *shapeEntry, c *registry.Resolved) {
	s.shape, s.err = countShape(c)
	if s.err != nil {
		m.mu.Lock()
		delete(m.shapes, c.Key) // a later caller tries again
		m.mu.Unlock()
	}
	close(s.done)
}

// countShape runs c's Define on an example input through a counter.
func countShape(c *registry.Resolved) (sh Shape, err error) {
	ex, err := c.Example(1)
	if err != nil {
		return Shape{}, err
	}
	circ, err := c.Circuit(ex)
	if err != nil {
		return Shape{}, fmt.Errorf("shape circuit: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("count %s: panic: %v", c.Key, p)
		}
	}()
	var k counter
	if err := circ.Define(&k); err != nil {
		return Shape{}, fmt.Errorf("count %s: %w", c.Key, err)
	}
	return Shape{Sys: k.system(), Terms: k.terms}, nil
}

// counter is an r1cs.API in shape mode that keeps counts only. Being none
// of r1cs's own APIs, it gets the plain sequence of every helper (Bind,
// Product, Parallel run their segments in order), which allocates and
// enforces what a compile does.
type counter struct {
	public, private, constraints int
	terms                        int64
	// The columns seen with a nonzero coefficient in A and B (what a key
	// holds; C is left out, a third of the pass's cost): publics by index
	// (One is 0), privates by index.
	pubA, pubB, privA, privB bitset
}

// system is the counts with the columns' densities (A holds every public
// column by the public-input rows).
func (k *counter) system() *r1cs.System {
	nbPublic := k.public + 1
	d := r1cs.Density{Columns: nbPublic + k.private, A: nbPublic + k.privA.count(),
		B: k.pubB.count() + k.privB.count(), C: nbPublic + k.private} // C: not counted, bounded by every column
	return &r1cs.System{NbPublic: nbPublic, NbPrivate: k.private, NbConstraints: k.constraints, Columns: &d}
}

// mark records lc's columns with a nonzero coefficient.
func (k *counter) mark(lc r1cs.LC, pub, priv *bitset) {
	for i := range lc {
		if lc[i].Coeff.IsZero() {
			continue
		}
		if v := lc[i].Var; v.IsPrivate() {
			priv.set(int(v &^ (1 << 31)))
		} else {
			pub.set(int(v))
		}
	}
}

// bitset is a growable set of small integers.
type bitset []uint64

func (b *bitset) set(i int) {
	w := i >> 6
	if w >= len(*b) {
		*b = append(*b, make([]uint64, w+1-len(*b))...)
	}
	(*b)[w] |= 1 << (i & 63)
}

func (b bitset) count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

func (k *counter) Public(fr.Element) r1cs.Variable {
	k.public++
	return r1cs.Variable(k.public)
}

func (k *counter) Private(fr.Element) r1cs.Variable {
	k.private++
	return r1cs.Variable(k.private-1) | 1<<31 // r1cs's private tag
}

func (k *counter) Enforce(a, b, c r1cs.LC) {
	k.constraints++
	k.terms += int64(len(a) + len(b) + len(c))
	k.mark(a, &k.pubA, &k.privA)
	k.mark(b, &k.pubB, &k.privB)
}

func (k *counter) Value(r1cs.Variable) fr.Element { return fr.Element{} }
func (k *counter) Eval(r1cs.LC) fr.Element        { return fr.Element{} }
func (k *counter) Proving() bool                  { return false }
func (k *counter) Namespace(string) func()        { return func() {} }
