package porep

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// before pins porep-synth's shapes and witnesses: the shape's
// devkeys.ShapeID (keys made from it stay valid) and, for seed 3, a digest
// of the sequential Solve's vectors, which the parallel Solve must give too.
// The pins are of the current circuit. Those of the sizes without labels
// date from before Define ran the challenges and the column chain as
// r1cs.Parallel segments; the labelled sizes were re-pinned when labels
// gained their parents (a bit-heavy witness).
var before = []struct {
	target       int
	shape, solve string
	long         bool // left out with -short
}{
	{1 << 10, "62efd2532b7847fd6d68019d", "3ed0ffb0a81f27c170e5ddaa", false},
	{4096 + 37, "ed43db566990ceed60c3e725", "5f839247bdbcc535a3737c9d", false},
	{1 << 16, "839028a2c9dab4ca8cd481ff", "9eed4e3c48c17530e47e6123", false},
	{100003, "dab74d4fd76c559617442f98", "1bff27749fa7f2e67878a2c7", true},
	{115113, "a291d8e31535386bc8b938dd", "86861e32377905593263dda7", false}, // the smallest with a label
	{140001, "b080626f173d10d7e5625b91", "4a65884c450fdf3f65680775", false},
	{1 << 17, "bead517045c4711b9caff048", "b2b4d8aeb98fae15f838ba3f", true},
	{1 << 18, "28ab92ec93182f6ffbb4a8ed", "379dc838ffc2afeb26c391fa", true},
	{1 << 20, "5ecb1aaa4ae82e707ea0d405", "1d11dfed2bb05e458dd8addb", true},
}

func vectorsDigest(a *r1cs.Assignment) string {
	h := sha256.New()
	for _, v := range [][]fr.Element{a.Public, a.Private, a.A, a.B, a.C} {
		for i := range v {
			b := v[i].Bytes()
			h.Write(b[:])
		}
		h.Write([]byte{0xff})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// requireSameAssignment compares two assignments element by element and
// names the first difference.
func requireSameAssignment(t *testing.T, want, got *r1cs.Assignment, msg string) {
	t.Helper()
	require.Equal(t, want.NbConstraints, got.NbConstraints, msg)
	for _, v := range []struct {
		name      string
		want, got []fr.Element
	}{{"public", want.Public, got.Public}, {"private", want.Private, got.Private},
		{"a", want.A, got.A}, {"b", want.B, got.B}, {"c", want.C, got.C}} {
		require.Len(t, v.got, len(v.want), "%s: %s", msg, v.name)
		if !slices.Equal(v.want, v.got) {
			i := 0
			for v.want[i] == v.got[i] {
				i++
			}
			require.FailNowf(t, "vectors differ", "%s: %s[%d] = %s, want %s", msg, v.name, i, v.got[i].String(), v.want[i].String())
		}
	}
}

func TestShapeAndSequentialSolveUnchanged(t *testing.T) {
	for _, tc := range before {
		if tc.long && testing.Short() {
			continue
		}
		t.Run(fmt.Sprint(tc.target), func(t *testing.T) {
			c, err := New(tc.target, 3)
			require.NoError(t, err)
			sys, err := r1cs.Compile(c)
			require.NoError(t, err)
			assert.Equal(t, tc.shape, devkeys.ShapeID(sys), "shape")
			seq, err := r1cs.Solve(c, r1cs.WithShape(sys), r1cs.WithWorkers(1))
			require.NoError(t, err)
			assert.Equal(t, tc.solve, vectorsDigest(seq), "sequential solve")
			par, err := r1cs.Solve(c, r1cs.WithShape(sys), r1cs.WithWorkers(2))
			require.NoError(t, err)
			assert.Equal(t, tc.solve, vectorsDigest(par), "parallel solve")
		})
	}
}

func TestParallelSolveIdentical(t *testing.T) {
	targets := []int{1 << 10, 4096 + 37, 1 << 16, 140001}
	if !testing.Short() {
		targets = append(targets, 1<<17+999, 1<<18)
	}
	for _, target := range targets {
		for _, seed := range []int64{1, 2} {
			t.Run(fmt.Sprintf("%d/seed%d", target, seed), func(t *testing.T) {
				c, err := New(target, seed)
				require.NoError(t, err)
				sys, err := r1cs.Compile(c)
				require.NoError(t, err)
				want, err := r1cs.Solve(c, r1cs.WithShape(sys), r1cs.WithWorkers(1))
				require.NoError(t, err)
				for _, workers := range []int{2, 3, 8} {
					got, err := r1cs.Solve(c, r1cs.WithShape(sys), r1cs.WithWorkers(workers))
					require.NoError(t, err)
					requireSameAssignment(t, want, got, fmt.Sprintf("%d workers", workers))
				}
				// Into reused, dirty buffers, as a prover's worker solves.
				prev, err := r1cs.Solve(c, r1cs.WithShape(sys), r1cs.WithWorkers(2))
				require.NoError(t, err)
				for i := range prev.A {
					prev.A[i].SetUint64(uint64(i))
				}
				got, err := r1cs.Solve(c, r1cs.WithShape(sys), r1cs.WithBuffers(prev), r1cs.WithWorkers(2))
				require.NoError(t, err)
				requireSameAssignment(t, want, got, "reused buffers")
			})
		}
	}
}

// tamper returns a copy of c whose witness is wrong in challenge k's
// inclusion proof (k ≥ 0) or in the column chain (k < 0).
func tamper(c *Circuit, ks ...int) *Circuit {
	bad := *c
	bad.proofs = slices.Clone(c.proofs)
	bad.columns = slices.Clone(c.columns)
	for _, k := range ks {
		if k < 0 {
			bad.columns[0] = slices.Clone(c.columns[0])
			bad.columns[0][0].SetUint64(12)
			continue
		}
		p := *c.proofs[k]
		p.Siblings = slices.Clone(p.Siblings)
		p.Siblings[1] = slices.Clone(p.Siblings[1])
		p.Siblings[1][2].SetUint64(5)
		bad.proofs[k] = &p
	}
	return &bad
}

func TestParallelUnsatisfiedSameAsSequential(t *testing.T) {
	c, err := New(140001, 4)
	require.NoError(t, err)
	require.Positive(t, c.Layout.Labelled)
	require.NotEqual(t, [3]int{}, c.Layout.Fill)
	require.Equal(t, 10, c.Layout.Challenges)
	labelled := *c
	labelled.Challenges = slices.Clone(c.Challenges)
	labelled.Challenges[0] ^= 1 // the label's node bits no longer match the public challenge
	parent := *c
	parent.parents = slices.Clone(c.parents)
	parent.parents[0][3][7] ^= 0x10 // the label, and so the leaf, changes
	cases := []struct {
		name string
		c    *Circuit
		path string // the root equality of a challenge, or comm_r's after the segments
	}{
		{"proof", tamper(c, 7), "challenge7"},
		{"two proofs", tamper(c, 9, 3), "challenge3"},
		{"columns", tamper(c, -1), "comm_r"},
		{"proof and columns", tamper(c, -1, 5), "challenge5"},
		{"label", &labelled, "challenge0"},
		{"parent label", &parent, "challenge0"},
		{"labelled proof", tamper(c, 0), "challenge0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, seqErr := r1cs.Solve(tc.c, r1cs.WithWorkers(1))
			var want *r1cs.UnsatisfiedError
			require.True(t, errors.As(seqErr, &want), "sequential: %v", seqErr)
			assert.Equal(t, tc.path, want.Path)
			for _, workers := range []int{2, 5} {
				_, err := r1cs.Solve(tc.c, r1cs.WithWorkers(workers))
				var got *r1cs.UnsatisfiedError
				require.True(t, errors.As(err, &got), "%d workers: %v", workers, err)
				assert.Equal(t, want, got, "%d workers", workers)
				assert.Equal(t, seqErr.Error(), err.Error())
			}
		})
	}
}

func TestSegmentSizesMatchCompile(t *testing.T) {
	for _, target := range []int{1 << 10, 4096 + 37, 140001} {
		c, err := New(target, 1)
		require.NoError(t, err)
		sys, err := r1cs.Compile(c) // checks every segment against its declaration
		require.NoError(t, err)
		segs := c.segments(nil, make([]r1cs.Variable, len(c.Challenges)), r1cs.One, new(r1cs.LC))
		require.Len(t, segs, c.Layout.Challenges+1)
		var priv, cons int
		for _, s := range segs {
			priv, cons = priv+s.Private, cons+s.Constraints
		}
		assert.Less(t, priv, sys.NbPrivate, "%d: the head and tail allocate too", target)
		assert.Less(t, cons, sys.NbConstraints)
		if target > 1<<17 {
			assert.Greater(t, float64(cons), 0.99*float64(sys.NbConstraints), "%d: almost all constraints are in segments", target)
		}
		wantLab := c.sizes.plain.constraints + labelCost(Synth)
		assert.Equal(t, wantLab, c.sizes.labelled.constraints, "%d: a label's cost", target)
		assert.Equal(t, challengeCost(c.Layout.Depth), c.sizes.plain.constraints, "%d", target)
	}
}
