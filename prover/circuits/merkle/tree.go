package merkle

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/circuits/poseidon"
)

// ErrIndex means a leaf index is outside the tree.
var ErrIndex = errors.New("leaf index out of range")

// Tree is a sparse Poseidon Merkle tree. It is immutable after NewTree and
// safe for concurrent readers.
type Tree struct {
	params   *poseidon.Params
	arity    int
	depth    int
	levels   []map[uint64]fr.Element // levels[0] are the set leaves, levels[depth] the root
	defaults []fr.Element            // defaults[l] is the node of an untouched subtree at level l
}

// NewTree builds the tree of the given depth whose leaves are zero except
// those in leaves, hashing each level on all cores. The arity is
// params.Arity() and must be a power of two. leaves becomes the tree's and
// must not change afterwards.
func NewTree(params *poseidon.Params, depth int, leaves map[uint64]fr.Element) (*Tree, error) {
	a := params.Arity()
	if a < 2 || a&(a-1) != 0 {
		return nil, fmt.Errorf("merkle tree: arity %d is not a power of two", a)
	}
	if depth < 1 || depth*bits.Len(uint(a-1)) > 62 {
		return nil, fmt.Errorf("merkle tree: depth %d out of range for arity %d", depth, a)
	}
	t := &Tree{params: params, arity: a, depth: depth}
	for i := range leaves {
		if i >= t.Leaves() {
			return nil, fmt.Errorf("merkle tree: leaf %d: %w", i, ErrIndex)
		}
	}
	t.defaults = make([]fr.Element, depth+1)
	t.levels = make([]map[uint64]fr.Element, depth+1)
	t.levels[0] = leaves
	for l := 0; l < depth; l++ {
		var err error
		t.defaults[l+1], err = params.Hash(repeat(t.defaults[l], a)...)
		if err != nil {
			return nil, fmt.Errorf("merkle tree: default node %d: %w", l+1, err)
		}
		if err := t.hashLevel(l); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// hashLevel sets level l+1 from level l: the parents of its set nodes, each
// hashed once. The hashes are independent, so they are spread over all
// cores (level l is only read meanwhile); the first error in parent order
// is returned.
func (t *Tree) hashLevel(l int) error {
	parents := make([]uint64, 0, len(t.levels[l]))
	for i := range t.levels[l] {
		parents = append(parents, i/uint64(t.arity))
	}
	slices.Sort(parents)
	parents = slices.Compact(parents)
	hashes := make([]fr.Element, len(parents))
	errs := make([]error, len(parents))
	workers := min(runtime.GOMAXPROCS(0), len(parents)/16+1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for k := w * len(parents) / workers; k < (w+1)*len(parents)/workers; k++ {
				hashes[k], errs[k] = t.params.Hash(t.children(l, parents[k])...)
			}
		})
	}
	wg.Wait()
	t.levels[l+1] = make(map[uint64]fr.Element, len(parents))
	for k, parent := range parents {
		if errs[k] != nil {
			return fmt.Errorf("merkle tree: node %d/%d: %w", l+1, parent, errs[k])
		}
		t.levels[l+1][parent] = hashes[k]
	}
	return nil
}

// FromLeaves builds the dense tree over leaves, whose count must be a power
// of the arity.
func FromLeaves(params *poseidon.Params, leaves []fr.Element) (*Tree, error) {
	a := params.Arity()
	depth := 0
	for n := 1; n < len(leaves); n *= a {
		depth++
	}
	if n := pow(a, depth); n != len(leaves) || depth == 0 {
		return nil, fmt.Errorf("merkle tree: %d leaves is not a positive power of %d", len(leaves), a)
	}
	m := make(map[uint64]fr.Element, len(leaves))
	for i, v := range leaves {
		m[uint64(i)] = v
	}
	return NewTree(params, depth, m)
}

func pow(a, d int) int {
	n := 1
	for range d {
		n *= a
	}
	return n
}

func repeat(e fr.Element, n int) []fr.Element {
	out := make([]fr.Element, n)
	for i := range out {
		out[i] = e
	}
	return out
}

// node returns node i of level l.
func (t *Tree) node(l int, i uint64) fr.Element {
	if v, ok := t.levels[l][i]; ok {
		return v
	}
	return t.defaults[l]
}

// children returns the arity children (at level l) of node parent.
func (t *Tree) children(l int, parent uint64) []fr.Element {
	out := make([]fr.Element, t.arity)
	for j := range out {
		out[j] = t.node(l, parent*uint64(t.arity)+uint64(j))
	}
	return out
}

// Leaves is the number of leaf positions, arity^depth.
func (t *Tree) Leaves() uint64 { return uint64(1) << (t.depth * bits.Len(uint(t.arity-1))) }

// Depth is the number of levels above the leaves.
func (t *Tree) Depth() int { return t.depth }

// Root is the root hash.
func (t *Tree) Root() fr.Element { return t.node(t.depth, 0) }

// Proof is an inclusion proof: the leaf, its index, and for every level from
// the leaves up the arity − 1 siblings in left-to-right order.
type Proof struct {
	Leaf     fr.Element
	Index    uint64
	Siblings [][]fr.Element
}

// Prove returns the inclusion proof of leaf index.
func (t *Tree) Prove(index uint64) (*Proof, error) {
	if index >= t.Leaves() {
		return nil, fmt.Errorf("merkle prove %d: %w", index, ErrIndex)
	}
	p := &Proof{Leaf: t.node(0, index), Index: index, Siblings: make([][]fr.Element, t.depth)}
	i := index
	for l := 0; l < t.depth; l++ {
		kids := t.children(l, i/uint64(t.arity))
		pos := int(i % uint64(t.arity))
		p.Siblings[l] = append(kids[:pos:pos], kids[pos+1:]...)
		i /= uint64(t.arity)
	}
	return p, nil
}

// ComputeRoot hashes the proof's leaf up its path natively.
func (p *Proof) ComputeRoot(params *poseidon.Params) (fr.Element, error) {
	a := params.Arity()
	cur := p.Leaf
	i := p.Index
	for l, sibs := range p.Siblings {
		if len(sibs) != a-1 {
			return fr.Element{}, fmt.Errorf("merkle proof level %d: %d siblings, want %d", l, len(sibs), a-1)
		}
		pos := int(i % uint64(a))
		kids := make([]fr.Element, 0, a)
		kids = append(append(append(kids, sibs[:pos]...), cur), sibs[pos:]...)
		var err error
		if cur, err = params.Hash(kids...); err != nil {
			return fr.Element{}, fmt.Errorf("merkle proof level %d: %w", l, err)
		}
		i /= uint64(a)
	}
	return cur, nil
}
