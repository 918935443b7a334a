package merkle

import (
	"math/big"
	"math/rand"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/circuits/internal/circuittest"
	"github.com/cuzk-dev/cuzk/prover/circuits/poseidon"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

func TestTreeNative(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, tc := range []struct {
		name   string
		params *poseidon.Params
		leaves int
	}{
		{"binary", poseidon.Width3(), 16},
		{"octal", poseidon.Width9(), 64},
		{"binary, levels hashed on several cores", poseidon.Width3(), 1 << 11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leaves := circuittest.Elements(rng, tc.leaves)
			tree, err := FromLeaves(tc.params, leaves)
			require.NoError(t, err)
			assert.Equal(t, uint64(tc.leaves), tree.Leaves())

			// The root is the hash of the hashes of the leaf groups.
			a := tc.params.Arity()
			var level []fr.Element
			for l := leaves; len(l) > 1; l = level {
				level = nil
				for i := 0; i < len(l); i += a {
					h, err := tc.params.Hash(l[i : i+a]...)
					require.NoError(t, err)
					level = append(level, h)
				}
			}
			assert.Equal(t, level[0], tree.Root())

			for i := range leaves {
				p, err := tree.Prove(uint64(i))
				require.NoError(t, err)
				assert.Equal(t, leaves[i], p.Leaf)
				root, err := p.ComputeRoot(tc.params)
				require.NoError(t, err)
				assert.Equal(t, tree.Root(), root, "leaf %d", i)
			}
			_, err = tree.Prove(uint64(tc.leaves))
			assert.ErrorIs(t, err, ErrIndex)
		})
	}
}

func TestSparseMatchesDense(t *testing.T) {
	p := poseidon.Width9()
	leaves := make([]fr.Element, 64)
	leaves[5].SetUint64(55)
	leaves[63].SetUint64(7)
	dense, err := FromLeaves(p, leaves)
	require.NoError(t, err)
	sparse, err := NewTree(p, 2, map[uint64]fr.Element{5: leaves[5], 63: leaves[63]})
	require.NoError(t, err)
	assert.Equal(t, dense.Root(), sparse.Root())
	_, err = NewTree(p, 2, map[uint64]fr.Element{64: {}})
	assert.ErrorIs(t, err, ErrIndex)
}

func TestLevelConstraints(t *testing.T) {
	assert.Equal(t, 324, LevelConstraints(poseidon.Width3()))
	assert.Equal(t, 552, LevelConstraints(poseidon.Width9()))
}

func TestCircuit(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, tc := range []struct {
		name   string
		params *poseidon.Params
		depth  int
	}{
		{"binary", poseidon.Width3(), 6},
		{"octal", poseidon.Width9(), 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := randomTree(t, rng, tc.params, tc.depth, 20)
			for _, index := range []uint64{0, 1, tree.Leaves() - 1, uint64(rng.Int63n(int64(tree.Leaves())))} {
				c, err := NewCircuit(tree, index)
				require.NoError(t, err)
				sys, err := r1cs.Compile(c)
				require.NoError(t, err)
				assert.Equal(t, tc.depth*LevelConstraints(tc.params)+2, sys.NbConstraints)
				asg, err := r1cs.Solve(c, r1cs.WithShape(sys))
				require.NoError(t, err, "index %d", index)
				var idx fr.Element
				idx.SetUint64(index)
				assert.Equal(t, []fr.Element{tree.Root(), idx}, asg.PublicInputs())
			}
			requireWrongPathsFail(t, tree, rng)
		})
	}
}

// requireWrongPathsFail checks that a wrong sibling, a wrong position, a
// wrong root and corrupted witnesses all leave the circuit unsatisfied.
func requireWrongPathsFail(t *testing.T, tree *Tree, rng *rand.Rand) {
	// Leaves 0 and 1 differ (randomTree sets leaf 0), so swapping them moves
	// the root.
	index := uint64(0)
	good, err := NewCircuit(tree, index)
	require.NoError(t, err)

	wrongSibling := cloneCircuit(good)
	wrongSibling.Proof.Siblings[1][0].SetUint64(12345)
	_, err = r1cs.Solve(wrongSibling)
	circuittest.RequireUnsatisfied(t, err, "root")

	wrongIndex := cloneCircuit(good)
	wrongIndex.Proof.Index = index ^ 1
	_, err = r1cs.Solve(wrongIndex)
	circuittest.RequireUnsatisfied(t, err, "root")

	wrongRoot := cloneCircuit(good)
	wrongRoot.Root.SetUint64(1)
	_, err = r1cs.Solve(wrongRoot)
	circuittest.RequireUnsatisfied(t, err, "root")

	// Private 1 is the first index digit (0 → 1 stays boolean but moves the
	// leaf) and private 2 a sibling: both surface at the root binding.
	n := circuittest.CountPrivates(t, good)
	for _, tc := range []struct {
		target int
		where  string
	}{{1, "root"}, {2, "root"}, {30, "merkle/level0"}, {n - 1, "merkle"}} {
		_, err = r1cs.Solve(&circuittest.Tampered{Inner: good, Target: tc.target})
		circuittest.RequireUnsatisfied(t, err, tc.where)
	}
}

func cloneCircuit(c *Circuit) *Circuit {
	out := *c
	p := *c.Proof
	p.Siblings = make([][]fr.Element, len(c.Proof.Siblings))
	for i, s := range c.Proof.Siblings {
		p.Siblings[i] = append([]fr.Element(nil), s...)
	}
	out.Proof = &p
	return &out
}

func randomTree(t *testing.T, rng *rand.Rand, p *poseidon.Params, depth, n int) *Tree {
	t.Helper()
	leaves := map[uint64]fr.Element{}
	size := uint64(1)
	for range depth {
		size *= uint64(p.Arity())
	}
	for _, v := range circuittest.Elements(rng, n) {
		leaves[uint64(rng.Int63n(int64(size)))] = v
	}
	leaves[0], leaves[size-1] = circuittest.Elements(rng, 1)[0], circuittest.Elements(rng, 1)[0]
	tree, err := NewTree(p, depth, leaves)
	require.NoError(t, err)
	return tree
}

func TestSHA256Leaves(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	p := poseidon.Width9()
	data := make([][]byte, 8)
	leaves := make([]fr.Element, 8)
	for i := range data {
		data[i] = make([]byte, 32)
		rng.Read(data[i])
		leaves[i] = TruncatedSHA256(data[i])
		var v big.Int
		assert.LessOrEqual(t, leaves[i].BigInt(&v).BitLen(), leafBits)
	}
	tree, err := FromLeaves(p, leaves)
	require.NoError(t, err)

	c, err := NewSHA256Circuit(tree, 3, data[3])
	require.NoError(t, err)
	_, err = r1cs.Solve(c)
	require.NoError(t, err)

	_, err = NewSHA256Circuit(tree, 3, data[4])
	assert.Error(t, err)
	bad := cloneCircuit(c)
	bad.LeafData = data[4]
	_, err = r1cs.Solve(bad)
	circuittest.RequireUnsatisfied(t, err, "root")
}

func BenchmarkRootGadget(b *testing.B) {
	rng := rand.New(rand.NewSource(4))
	for _, tc := range []struct {
		name   string
		params *poseidon.Params
		depth  int
	}{{"binary-d30", poseidon.Width3(), 30}, {"octal-d10", poseidon.Width9(), 10}} {
		b.Run(tc.name, func(b *testing.B) {
			tree, err := NewTree(tc.params, tc.depth, map[uint64]fr.Element{7: circuittest.Elements(rng, 1)[0]})
			require.NoError(b, err)
			c, err := NewCircuit(tree, 7)
			require.NoError(b, err)
			for b.Loop() {
				if _, err := r1cs.Solve(c); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(tc.depth*LevelConstraints(tc.params)+2), "constraints/op")
		})
	}
}

func TestProveVerify(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, p := range []*poseidon.Params{poseidon.Width3(), poseidon.Width9()} {
		tree := randomTree(t, rng, p, 3, 10)
		c, err := NewCircuit(tree, 0)
		require.NoError(t, err)
		circuittest.ProveAndVerify(t, c)
	}
}
