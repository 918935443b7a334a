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

// sumCircuit hashes private message bytes and records the digest values.
type sumCircuit struct {
	msg    []byte
	digest []byte
}

func (c *sumCircuit) Define(api r1cs.API) error {
	c.digest = BitsToBytes(Sum(api, AllocBytes(api, c.msg)))
	return nil
}

func TestSumMatchesStdlib(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	lengths := []int{0, 1, 3, 31, 32, 55, 56, 63, 64, 65, 119, 120, 128, 200}
	if testing.Short() {
		lengths = []int{0, 55, 56, 64, 119}
	}
	for _, n := range lengths {
		msg := make([]byte, n)
		rng.Read(msg)
		c := &sumCircuit{msg: msg}
		_, err := r1cs.Solve(c)
		require.NoError(t, err, "length %d", n)
		want := sha256.Sum256(msg)
		assert.Equal(t, want[:], c.digest, "length %d", n)
	}
}

// Constraint counts: a block with a variable message and chaining state
// costs 26 232 (see the package documentation). The first block starts from
// the constant IV, which folds part of its first rounds away; a block made
// only of constant padding has a constant schedule; an all-constant message
// folds completely.
const (
	firstBlockConstraints = 25675
	blockConstraints      = 26232
	paddingOnlyBlock      = 19101
)

func TestConstraintsPerBlock(t *testing.T) {
	count := func(n int) int {
		sys, err := r1cs.Compile(&sumCircuit{msg: make([]byte, n)})
		require.NoError(t, err)
		return sys.NbConstraints - 8*n // minus the booleanity of the message bits
	}
	assert.Equal(t, 0, count(0))
	assert.Equal(t, firstBlockConstraints, count(55))
	assert.Equal(t, firstBlockConstraints+paddingOnlyBlock, count(56))
	assert.Equal(t, firstBlockConstraints+blockConstraints, count(119))
	assert.Equal(t, firstBlockConstraints+2*blockConstraints, count(183))
	assert.Equal(t, 64*294+48*149+8*33, blockConstraints)
	assert.LessOrEqual(t, blockConstraints, 30000)
}

func TestCircuit(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	msg := make([]byte, 70)
	rng.Read(msg)
	c := NewCircuit(msg)
	sys, err := r1cs.Compile(c)
	require.NoError(t, err)
	asg, err := r1cs.Solve(c, r1cs.WithShape(sys))
	require.NoError(t, err)
	assert.Equal(t, c.Digest[:], asg.PublicInputs())

	bad := *c
	bad.Digest[1].SetUint64(7)
	_, err = r1cs.Solve(&bad)
	circuittest.RequireUnsatisfied(t, err, "digest")

	// A message with one flipped bit breaks the digest binding.
	flipped := *c
	flipped.Message = append([]byte(nil), msg...)
	flipped.Message[9] ^= 4
	_, err = r1cs.Solve(&flipped)
	circuittest.RequireUnsatisfied(t, err, "digest")

	// Corrupted internal witnesses trip the gadget's own constraints.
	for _, target := range []int{3, 8 * len(msg), 8*len(msg) + 5000, sys.NbPrivate - 1} {
		_, err = r1cs.Solve(&circuittest.Tampered{Inner: c, Target: target})
		circuittest.RequireUnsatisfied(t, err, "")
	}
}

func TestBitOps(t *testing.T) {
	// Every gate on every combination of variable, negated and constant
	// inputs satisfies its constraints and gives the boolean truth table.
	kinds := []string{"var", "not", "const"}
	for _, ka := range kinds {
		for _, kb := range kinds {
			for _, kc := range kinds {
				for v := 0; v < 8; v++ {
					c := &gateCircuit{kinds: [3]string{ka, kb, kc}, vals: [3]bool{v&1 == 1, v&2 == 2, v&4 == 4}}
					_, err := r1cs.Solve(c)
					require.NoError(t, err)
					a, b, cc := c.vals[0], c.vals[1], c.vals[2]
					assert.Equal(t, a != b, c.got[0], "xor %v", c.kinds)
					assert.Equal(t, a && b, c.got[1], "and %v", c.kinds)
					assert.Equal(t, (a && b) || (!a && cc), c.got[2], "ch %v", c.kinds)
					assert.Equal(t, majority(a, b, cc), c.got[3], "maj %v", c.kinds)
				}
			}
		}
	}
}

type gateCircuit struct {
	kinds [3]string
	vals  [3]bool
	got   [4]bool
}

func (c *gateCircuit) Define(api r1cs.API) error {
	var in [3]Bit
	for i, k := range c.kinds {
		switch k {
		case "var":
			in[i] = AllocBit(api, c.vals[i])
		case "not":
			in[i] = AllocBit(api, !c.vals[i]).Not()
		default:
			in[i] = ConstBit(c.vals[i])
		}
	}
	outs := []Bit{Xor(api, in[0], in[1]), And(api, in[0], in[1]), Ch(api, in[0], in[1], in[2]), Maj(api, in[0], in[1], in[2])}
	for i, o := range outs {
		c.got[i] = o.Value()
		if !o.IsConstant() { // the output variable holds the claimed value
			assert.Equal(nil, boolElement(o.value), api.Eval(o.LC()))
		}
	}
	return nil
}

func BenchmarkSum(b *testing.B) {
	for _, n := range []int{32, 64, 256} {
		msg := make([]byte, n)
		b.Run(map[int]string{32: "32B", 64: "64B", 256: "256B"}[n], func(b *testing.B) {
			c := &sumCircuit{msg: msg}
			sys, err := r1cs.Compile(c)
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r1cs.Solve(c, r1cs.WithShape(sys)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(sys.NbConstraints), "constraints/op")
			b.ReportMetric(float64(sys.NbConstraints)*float64(b.N)/b.Elapsed().Seconds(), "constraints/s")
		})
	}
}

func TestProveVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("one SHA-256 block needs a 2^15 setup; skipped in -short mode")
	}
	msg := make([]byte, 40)
	rand.New(rand.NewSource(6)).Read(msg)
	circuittest.ProveAndVerify(t, NewCircuit(msg))
}

// wordCircuit adds words of every kind: one variable word alone (no carry:
// the packing row), with a constant (a top carry bit), with a shifted copy
// (constant high bits) and several at once (lower carries too).
type wordCircuit struct{ x, y uint32 }

func (c *wordCircuit) Define(api r1cs.API) error {
	alloc := func(x uint32) Word {
		var w Word
		for i := range w {
			w[i] = AllocBit(api, x>>i&1 == 1)
		}
		return w
	}
	x, y := alloc(c.x), alloc(c.y)
	Add(api, 0, x)
	Add(api, 0xdeadbeef, x)
	Add(api, 0, x, y.shr(7))
	Add(api, 7, x, y, ConstWord(c.y^c.x), y.rotr(3), x.rotr(11))
	g := newGates(api)
	g.xor3(x, y.shr(3), ConstWord(c.x))
	return nil
}

// Proving mode passes the gates' row values directly (r1cs.Direct); they
// must be the values of the combinations that shape mode records, element
// for element, for every gate, input kind and word sum.
func TestDirectRowsMatchCombinations(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	var circuits []r1cs.Circuit
	for _, n := range []int{0, 1, 55, 56, 64, 119} {
		msg := make([]byte, n)
		rng.Read(msg)
		circuits = append(circuits, &sumCircuit{msg: msg}, NewCircuit(msg))
	}
	for range 8 {
		circuits = append(circuits, &wordCircuit{x: rng.Uint32(), y: rng.Uint32()})
	}
	circuits = append(circuits, &wordCircuit{x: ^uint32(0), y: ^uint32(0)}, &wordCircuit{})
	kinds := []string{"var", "not", "const"}
	for _, ka := range kinds {
		for _, kb := range kinds {
			for _, kc := range kinds {
				for v := range 8 {
					circuits = append(circuits, &gateCircuit{kinds: [3]string{ka, kb, kc}, vals: [3]bool{v&1 == 1, v&2 == 2, v&4 == 4}})
				}
			}
		}
	}
	for i, c := range circuits {
		direct, err := r1cs.Solve(c)
		require.NoError(t, err, "circuit %d (%T)", i, c)
		combos, err := r1cs.Solve(c, r1cs.WithCombinationRows())
		require.NoError(t, err, "circuit %d (%T)", i, c)
		require.Equal(t, combos, direct, "circuit %d (%T): direct rows differ from their combinations", i, c)
	}
}
