package sha256

import (
	"crypto/sha256"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/circuits/internal/circuittest"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// styledSum hashes private message bytes in one style.
type styledSum struct {
	style  Style
	msg    []byte
	digest []byte
}

func (c *styledSum) Define(api r1cs.API) error {
	c.digest = BitsToBytes(c.style.Sum(api, AllocBytes(api, c.msg)))
	return nil
}

// styledWords adds and combines words in one style: every kind of sum
// (no carry, a top carry only, lower carries) and Maj on variables.
type styledWords struct {
	style Style
	x, y  uint32
}

func (c *styledWords) Define(api r1cs.API) error {
	g := c.style.gates(api)
	alloc := func(x uint32) Word {
		var w Word
		for i := range w {
			w[i] = g.allocBit(x>>i&1 == 1)
		}
		return w
	}
	x, y := alloc(c.x), alloc(c.y)
	g.add(0, x)
	g.add(0xdeadbeef, x)
	g.add(0, x, y.shr(7))
	g.add(7, x, y, ConstWord(c.y^c.x), y.rotr(3), x.rotr(11))
	for i := range x {
		g.maj(x[i], y[i], x[(i+5)%32].Not())
	}
	return nil
}

func TestBellmanStyleMatchesStdlib(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for _, n := range []int{0, 1, 55, 56, 64, 119, 200} {
		msg := make([]byte, n)
		rng.Read(msg)
		c := &styledSum{style: Bellman, msg: msg}
		direct, err := r1cs.Solve(c)
		require.NoError(t, err, "length %d", n)
		want := sha256.Sum256(msg)
		assert.Equal(t, want[:], c.digest, "length %d", n)
		combos, err := r1cs.Solve(c, r1cs.WithCombinationRows())
		require.NoError(t, err, "length %d", n)
		require.Equal(t, combos, direct, "length %d: direct rows differ from their combinations", n)
	}
	for range 8 {
		c := &styledWords{style: Bellman, x: rng.Uint32(), y: rng.Uint32()}
		direct, err := r1cs.Solve(c)
		require.NoError(t, err)
		combos, err := r1cs.Solve(c, r1cs.WithCombinationRows())
		require.NoError(t, err)
		require.Equal(t, combos, direct, "words %#x %#x: direct rows differ", c.x, c.y)
	}
}

// Every private variable of the Bellman style's word gadgets is pinned by
// a constraint: corrupting any one of them is caught.
func TestBellmanStyleEveryWitnessIsConstrained(t *testing.T) {
	c := &styledWords{style: Bellman, x: 0x9e3779b9, y: 0x7f4a7c15}
	n := circuittest.CountPrivates(t, c)
	for target := 0; target < n; target++ {
		_, err := r1cs.Solve(&circuittest.Tampered{Inner: c, Target: target})
		circuittest.RequireUnsatisfied(t, err, "")
	}
}

// The styles differ in which wires B touches, which is what the Bellman
// style is for; both stay close in size.
func TestStyleDensities(t *testing.T) {
	msg := make([]byte, 180) // three blocks with a variable chaining state
	shares := map[Style]float64{}
	sizes := map[Style]int{}
	for _, s := range []Style{Compact, Bellman} {
		sys, err := r1cs.Compile(&styledSum{style: s, msg: msg})
		require.NoError(t, err)
		d := sys.Density()
		shares[s] = d.Share(d.B)
		sizes[s] = sys.NbConstraints
		t.Logf("%s: %d constraints, %d wires; A %.3f, B %.3f, C %.3f", s, sys.NbConstraints, d.Columns,
			d.Share(d.A), d.Share(d.B), d.Share(d.C))
	}
	assert.Greater(t, shares[Compact], 0.6)
	assert.InDelta(t, 0.25, shares[Bellman], 0.05)
	assert.Less(t, float64(sizes[Bellman]), 1.04*float64(sizes[Compact]))
}

func TestBellmanStyleProveVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("one SHA-256 block needs a 2^15 setup; skipped in -short mode")
	}
	msg := make([]byte, 40)
	rand.New(rand.NewSource(12)).Read(msg)
	circuittest.ProveAndVerify(t, &styledCircuit{Circuit: NewCircuit(msg), style: Bellman})
}

// styledCircuit is Circuit with the digest computed in style.
type styledCircuit struct {
	*Circuit
	style Style
}

func (c *styledCircuit) Define(api r1cs.API) error {
	hi, lo := api.Public(c.Digest[0]), api.Public(c.Digest[1])
	digest := c.style.Sum(api, AllocBytes(api, c.Message))
	for i, v := range []r1cs.Variable{hi, lo} {
		half := make([]Bit, 128)
		for k := range half {
			half[k] = digest[128*i+127-k]
		}
		api.Enforce(Pack(half), r1cs.ConstUint64(1), r1cs.V(v))
	}
	return nil
}
