package poseidon

import (
	"math/rand"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/circuits/internal/circuittest"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// permCircuit runs PermuteGadget on private lanes and records the values of
// the output lanes in proving mode.
type permCircuit struct {
	p   *Params
	in  []fr.Element
	out []fr.Element
}

func (c *permCircuit) Define(api r1cs.API) error {
	lanes := make([]r1cs.LC, len(c.in))
	for i, v := range c.in {
		lanes[i] = r1cs.V(api.Private(v))
	}
	out, err := c.p.PermuteGadget(api, lanes)
	if err != nil {
		return err
	}
	c.out = c.out[:0]
	for _, lc := range out {
		c.out = append(c.out, api.Eval(lc))
	}
	return nil
}

func TestPermuteGadgetMatchesNative(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, tc := range []struct {
		name        string
		p           *Params
		constraints int
	}{
		{"t3", Width3(), 321},
		{"t5", Width5(), 395},
		{"t9", Width9(), 531},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.constraints, tc.p.Constraints())
			for trial := 0; trial < 4; trial++ {
				in := circuittest.Elements(rng, tc.p.T)
				want := append([]fr.Element(nil), in...)
				tc.p.Permute(want)

				c := &permCircuit{p: tc.p, in: in}
				asg, err := r1cs.Solve(c)
				require.NoError(t, err)
				assert.Equal(t, tc.constraints, asg.NbConstraints)
				assert.Equal(t, want, c.out)
			}
			sys, err := r1cs.Compile(&permCircuit{p: tc.p, in: make([]fr.Element, tc.p.T)})
			require.NoError(t, err)
			assert.Equal(t, tc.constraints, sys.NbConstraints)
			assert.Equal(t, tc.p.T+tc.constraints, sys.NbPrivate)
		})
	}
}

// TestGadgetConcurrent runs the gadget from several goroutines, which share
// the Params' tables and scratch pool.
func TestGadgetConcurrent(t *testing.T) {
	p := Width9()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(100 + w)))
			for range 3 {
				in := circuittest.Elements(rng, p.T)
				want := append([]fr.Element(nil), in...)
				p.Permute(want)
				c := &permCircuit{p: p, in: in}
				_, err := r1cs.Solve(c)
				assert.NoError(t, err)
				assert.Equal(t, want, c.out)
			}
		}()
	}
	wg.Wait()
}

// TestTables checks the gadget tables against the documented shape: one
// step per S-box, every input after the first round bound, and no input or
// output lane longer than 2T − 1 terms.
func TestTables(t *testing.T) {
	for _, p := range []*Params{Width3(), Width5(), Width9()} {
		tab := p.gadgetTables()
		require.Len(t, tab.steps, p.SBoxes())
		assert.Equal(t, p.Constraints(), 3*len(tab.steps)+tab.bound, "t=%d", p.T)
		for k, s := range tab.steps {
			assert.Equal(t, k >= p.T, s.bind, "t=%d step %d bound", p.T, k)
			assert.LessOrEqual(t, len(s.in.terms), 2*p.T-1, "t=%d step %d", p.T, k)
		}
		for i, a := range tab.out {
			assert.LessOrEqual(t, len(a.terms), p.T, "t=%d output lane %d", p.T, i)
		}
	}
}

func TestSolveLinear(t *testing.T) {
	e := func(v ...uint64) []fr.Element {
		out := make([]fr.Element, len(v))
		for i, x := range v {
			out[i].SetUint64(x)
		}
		return out
	}
	// x + 2y = 5, 3x + y = 5, 2x + 4y = 10 (redundant): x = 1, y = 2.
	x, ok := solveLinear([][]fr.Element{e(1, 2, 5), e(3, 1, 5), e(2, 4, 10)}, 2)
	require.True(t, ok)
	assert.Equal(t, e(1, 2), x)
	// x + y = 1, 2x + 2y = 3: inconsistent.
	_, ok = solveLinear([][]fr.Element{e(1, 1, 1), e(2, 2, 3)}, 2)
	assert.False(t, ok)
	// y = 4 alone: x is free and set to zero.
	x, ok = solveLinear([][]fr.Element{e(0, 1, 4)}, 2)
	require.True(t, ok)
	assert.Equal(t, e(0, 4), x)
}

func TestCircuit(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, p := range []*Params{Width3(), Width9()} {
		c, err := NewCircuit(p, circuittest.Elements(rng, p.Arity())...)
		require.NoError(t, err)
		sys, err := r1cs.Compile(c)
		require.NoError(t, err)
		assert.Equal(t, p.Constraints()+1, sys.NbConstraints)

		asg, err := r1cs.Solve(c, r1cs.WithShape(sys))
		require.NoError(t, err)
		assert.Equal(t, []fr.Element{c.Digest}, asg.PublicInputs())

		bad := *c
		bad.Digest.Add(&bad.Digest, &c.Digest)
		_, err = r1cs.Solve(&bad)
		circuittest.RequireUnsatisfied(t, err, "digest")

		// Corrupting any S-box output trips a constraint inside the gadget.
		for _, target := range []int{p.Arity(), p.Arity() + 100, sys.NbPrivate - 1} {
			_, err = r1cs.Solve(&circuittest.Tampered{Inner: c, Target: target})
			circuittest.RequireUnsatisfied(t, err, "poseidon")
		}
	}
}

func TestHashArity(t *testing.T) {
	p := Width3()
	_, err := p.Hash()
	assert.Error(t, err)
	_, err = p.Hash(make([]fr.Element, 3)...)
	assert.Error(t, err)
	one, err := p.Hash(fr.One())
	require.NoError(t, err)
	two, err := p.Hash(fr.One(), fr.Element{})
	require.NoError(t, err)
	assert.NotEqual(t, one, two, "domain tag separates input counts")
}

func BenchmarkPermuteGadget(b *testing.B) {
	for _, p := range []*Params{Width3(), Width9()} {
		b.Run(map[int]string{3: "t3", 9: "t9"}[p.T], func(b *testing.B) {
			c := &permCircuit{p: p, in: circuittest.Elements(rand.New(rand.NewSource(3)), p.T)}
			sys, err := r1cs.Compile(c)
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r1cs.Solve(c, r1cs.WithShape(sys)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(p.Constraints()), "constraints/op")
			b.ReportMetric(float64(p.Constraints())*float64(b.N)/b.Elapsed().Seconds(), "constraints/s")
		})
	}
}

func BenchmarkPermuteNative(b *testing.B) {
	for _, p := range []*Params{Width3(), Width9()} {
		b.Run(map[int]string{3: "t3", 9: "t9"}[p.T], func(b *testing.B) {
			state := circuittest.Elements(rand.New(rand.NewSource(4)), p.T)
			for b.Loop() {
				p.Permute(state)
			}
		})
	}
}

func TestProveVerify(t *testing.T) {
	c, err := NewCircuit(Width9(), circuittest.Elements(rand.New(rand.NewSource(5)), 8)...)
	require.NoError(t, err)
	circuittest.ProveAndVerify(t, c)
}

// laneCircuit permutes lanes of every kind: a constant, a sum of two
// variables with coefficients, a variable with a constant, and plain
// variables.
type laneCircuit struct {
	p  *Params
	in []fr.Element
}

func (c *laneCircuit) Define(api r1cs.API) error {
	lanes := make([]r1cs.LC, c.p.T)
	for i := range lanes {
		v := api.Private(c.in[i])
		switch i % 4 {
		case 0:
			lanes[i] = r1cs.Const(c.in[i])
		case 1:
			w := api.Private(c.in[0])
			lanes[i] = r1cs.V(v).AddTerm(c.in[1], w)
		case 2:
			lanes[i] = r1cs.V(v).AddTerm(c.in[2], r1cs.One)
		default:
			lanes[i] = r1cs.V(v)
		}
	}
	if _, err := c.p.PermuteGadget(api, lanes); err != nil {
		return err
	}
	_, err := c.p.HashGadget(api, lanes[1:]...)
	return err
}

// Proving mode passes the S-boxes' row values directly (r1cs.Direct); they
// must be the values of the combinations shape mode records, element for
// element.
func TestDirectRowsMatchCombinations(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, p := range []*Params{Width3(), Width5(), Width9()} {
		for range 3 {
			for _, c := range []r1cs.Circuit{&laneCircuit{p: p, in: circuittest.Elements(rng, p.T)},
				&permCircuit{p: p, in: circuittest.Elements(rng, p.T)}} {
				direct, err := r1cs.Solve(c)
				require.NoError(t, err)
				combos, err := r1cs.Solve(c, r1cs.WithCombinationRows())
				require.NoError(t, err)
				require.Equal(t, combos, direct, "width %d, %T: direct rows differ from their combinations", p.T, c)
			}
		}
	}
}
