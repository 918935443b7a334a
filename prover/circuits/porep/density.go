package porep

import (
	"fmt"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/circuits/poseidon"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// The column densities of a layout, without compiling it: what a proving
// key's A and B sections hold (r1cs.Density), from the probes of one
// challenge and of the column chain with comm_r. The head's variables
// (public inputs, the replica id's bits, comm_r_last), which every segment
// reads, are counted in every matrix, and a head variable a segment reads
// is counted again with that segment: the counts bound a compile's from
// above by at most the head's variables plus two a challenge, a few
// hundred columns of millions (tested).

// density returns the column densities bound for l, a layout of nv
// columns.
func density(l Layout, nv int) (r1cs.Density, error) {
	ch, err := challengeDensities(l.Shape, l.Depth)
	if err != nil {
		return r1cs.Density{}, err
	}
	tail, err := chainDensity(l.Fill)
	if err != nil {
		return r1cs.Density{}, err
	}
	head := l.Publics() + 1 // the publics and comm_r_last
	if l.Labelled > 0 {
		head += replicaCost - 1
	}
	plain := l.Challenges - l.Labelled
	d := r1cs.Density{Columns: nv}
	d.A = min(d.Columns, head+l.Labelled*ch[1].A+plain*ch[0].A+tail.A)
	d.B = min(d.Columns, head+l.Labelled*ch[1].B+plain*ch[0].B+tail.B)
	d.C = min(d.Columns, head+l.Labelled*ch[1].C+plain*ch[0].C+tail.C)
	return d, nil
}

// densityCache holds, per shape and tree depth, the columns one challenge
// adds to each matrix without and with its label.
var densityCache sync.Map // challengeKey → densityEntry

type densityEntry struct {
	d   [2]r1cs.Density
	err error
}

func challengeDensities(shape Shape, depth int) ([2]r1cs.Density, error) {
	key := challengeKey{shape, depth}
	if e, ok := densityCache.Load(key); ok {
		return e.(densityEntry).d, e.(densityEntry).err
	}
	var e densityEntry
	for i, labelled := range []bool{false, true} {
		if e.d[i], e.err = probeDensity(shape, depth, labelled); e.err != nil {
			break
		}
	}
	densityCache.Store(key, e)
	return e.d, e.err
}

// probeDensity is the columns one challenge adds to each matrix: its own
// variables, and the head variables it reads where the head alone has
// none.
func probeDensity(shape Shape, depth int, labelled bool) (r1cs.Density, error) {
	with, err := r1cs.Compile(challengeProbe{shape: shape, depth: depth, labelled: labelled, challenge: true})
	if err != nil {
		return r1cs.Density{}, fmt.Errorf("porep: compile challenge probe (depth %d): %w", depth, err)
	}
	head, err := r1cs.Compile(challengeProbe{shape: shape, depth: depth, labelled: labelled})
	if err != nil {
		return r1cs.Density{}, fmt.Errorf("porep: compile challenge probe head (depth %d): %w", depth, err)
	}
	w, h := with.Density(), head.Density()
	return r1cs.Density{Columns: w.Columns - h.Columns, A: w.A - h.A, B: w.B - h.B, C: w.C - h.C}, nil
}

// chainCache holds the column chain's and comm_r's columns per fill.
var chainCache sync.Map // [3]int → densityEntry (d[0])

// chainDensity is the columns the column chain and comm_r add to each
// matrix (comm_r_last and comm_r, head variables, included: the head
// counts them again).
func chainDensity(fill [3]int) (r1cs.Density, error) {
	if e, ok := chainCache.Load(fill); ok {
		return e.(densityEntry).d[0], e.(densityEntry).err
	}
	var e densityEntry
	sys, err := r1cs.Compile(chainProbe{fill})
	if err != nil {
		e.err = fmt.Errorf("porep: compile column chain probe %v: %w", fill, err)
	} else {
		e.d[0] = sys.Density()
		e.d[0].A -= sys.NbPublic // the public-input rows put the probe's publics in A
	}
	chainCache.Store(fill, e)
	return e.d[0], e.err
}

// chainProbe is the column chain of a fill and comm_r over it, on zero
// values.
type chainProbe struct{ fill [3]int }

func (p chainProbe) Define(api r1cs.API) error {
	c := &Circuit{Layout: Layout{Fill: p.fill}}
	for w, n := range p.fill {
		for range n {
			c.columns = append(c.columns, make([]fr.Element, fillWidths[w]().Arity()-1))
		}
	}
	commR, rootLast := api.Public(fr.Element{}), api.Private(fr.Element{})
	commC, err := c.columnChain(api)
	if err != nil {
		return err
	}
	got, err := poseidon.Width3().HashGadget(api, commC, r1cs.V(rootLast))
	if err != nil {
		return err
	}
	api.Enforce(got, r1cs.ConstUint64(1), r1cs.V(commR))
	return nil
}
