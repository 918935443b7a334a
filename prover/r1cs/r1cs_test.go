package r1cs_test

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
	"github.com/cuzk-dev/cuzk/prover/r1cs/r1cstest"
)

func TestShapeAndSolveAgree(t *testing.T) {
	cases := []struct {
		name                     string
		circuit                  r1cs.Circuit
		cons, pub, priv, domainN int
	}{
		{"cubic", r1cstest.NewCubic(3), 3, 2, 3, 8},
		{"chain1", &r1cstest.MulChain{N: 1, Seed: fr.NewElement(7)}, 2, 3, 1, 8},
		{"chain5", &r1cstest.MulChain{N: 5, Seed: fr.NewElement(7)}, 6, 3, 5, 16},
		{"chain13", &r1cstest.MulChain{N: 13, Seed: fr.NewElement(2)}, 14, 3, 13, 32},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sys, err := r1cs.Compile(tc.circuit)
			require.NoError(t, err)
			assert.Equal(t, tc.cons, sys.NbConstraints)
			assert.Equal(t, tc.pub, sys.NbPublic)
			assert.Equal(t, tc.priv, sys.NbPrivate)
			assert.Equal(t, tc.domainN, sys.DomainSize())
			assert.Equal(t, tc.cons+tc.pub, sys.A.Rows())
			one := fr.One()
			require.NotEmpty(t, sys.Coeffs)
			assert.True(t, sys.Coeffs[0].Equal(&one), "coefficient 0 is 1")
			assert.LessOrEqual(t, len(sys.Coeffs), tc.cons+1, "coefficients are interned")

			asg, err := r1cs.Solve(tc.circuit, r1cs.WithShape(sys))
			require.NoError(t, err)
			require.NoError(t, r1cstest.CheckAgainstMatrices(sys, asg))
			// Every row is satisfied, padding included.
			for i := range asg.A {
				var ab fr.Element
				ab.Mul(&asg.A[i], &asg.B[i])
				require.True(t, ab.Equal(&asg.C[i]), "row %d", i)
			}
			// The public-input rows carry the publics in A.
			for k, p := range asg.Public {
				assert.True(t, asg.A[tc.cons+k].Equal(&p), "public row %d", k)
			}
		})
	}
}

func TestSolveWithBuffers(t *testing.T) {
	c := &r1cstest.MulChain{N: 4000, Seed: fr.NewElement(5)}
	sys, err := r1cs.Compile(c)
	require.NoError(t, err)
	fresh, err := r1cs.Solve(c, r1cs.WithShape(sys))
	require.NoError(t, err)
	// Dirty buffers from another solve must not leak into the result.
	prev, err := r1cs.Solve(&r1cstest.MulChain{N: 4000, Seed: fr.NewElement(9)}, r1cs.WithShape(sys))
	require.NoError(t, err)
	for i := range prev.A {
		prev.A[i].SetUint64(uint64(i) + 1) // as a consumed quotient leaves it
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	reused, err := r1cs.Solve(c, r1cs.WithShape(sys), r1cs.WithBuffers(prev))
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Equal(t, fresh, reused)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(len(fresh.A)*32), "vectors are not reallocated")
	_, err = r1cs.Solve(c, r1cs.WithBuffers(nil))
	assert.Error(t, err)
}

// Solve lays Public‖Private out as one vector (Wires) when it sizes them
// (WithShape), keeps that layout when it solves into such buffers, and
// reports none where a vector left it.
func TestSolveWires(t *testing.T) {
	c := &segmented{lens: segmentLens, nested: true}
	sys, err := r1cs.Compile(c)
	require.NoError(t, err)
	asg, err := r1cs.Solve(c, r1cs.WithShape(sys), r1cs.WithWorkers(3))
	require.NoError(t, err)
	w := asg.WireVector()
	require.NotNil(t, w)
	assert.Equal(t, append(append([]fr.Element{}, asg.Public...), asg.Private...), w)
	assert.Same(t, &asg.Public[0], &w[0])
	assert.Same(t, &asg.Private[0], &w[len(asg.Public)])

	again, err := r1cs.Solve(c, r1cs.WithShape(sys), r1cs.WithBuffers(asg))
	require.NoError(t, err)
	require.NotNil(t, again.WireVector())
	assert.Same(t, &w[0], &again.WireVector()[0], "solved in place")

	// Buffers whose Public has no room for the publics: it moves, and the
	// result has no joint vector.
	short := *again
	short.Public = short.Public[:0:0]
	moved, err := r1cs.Solve(c, r1cs.WithShape(sys), r1cs.WithBuffers(&short))
	require.NoError(t, err)
	assert.Nil(t, moved.Wires)
	assert.Nil(t, moved.WireVector())

	// Without a shape there is none; a Wires that does not hold Public and
	// Private is not a wire vector.
	plain, err := r1cs.Solve(r1cstest.NewCubic(3))
	require.NoError(t, err)
	assert.Nil(t, plain.WireVector())
	plain.Wires = append(append([]fr.Element{}, plain.Public...), plain.Private...)
	assert.Nil(t, plain.WireVector(), "a copy is not the vectors' memory")
}

func TestSolveWithoutShape(t *testing.T) {
	asg, err := r1cs.Solve(r1cstest.NewCubic(3))
	require.NoError(t, err)
	want := fr.NewElement(35)
	require.Len(t, asg.PublicInputs(), 1)
	assert.True(t, asg.PublicInputs()[0].Equal(&want))
	assert.Len(t, asg.A, 8)
}

func TestWrongWitnessReportsIndexAndPath(t *testing.T) {
	c := r1cstest.NewCubic(3)
	c.Y.SetUint64(36)
	_, err := r1cs.Solve(c)
	var ue *r1cs.UnsatisfiedError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, 2, ue.Index)
	assert.Equal(t, "cubic", ue.Path)
	assert.Contains(t, err.Error(), "constraint 2 (cubic)")
}

// badCube claims a wrong cube inside the nested namespace.
type badCube struct{ r1cstest.Cubic }

func (c *badCube) Define(api r1cs.API) error {
	x := api.Private(c.X)
	pop := api.Namespace("outer")
	defer pop()
	defer api.Namespace("inner")()
	wrong := api.Private(fr.NewElement(1))
	api.Enforce(r1cs.V(x), r1cs.V(x), r1cs.V(wrong))
	return nil
}

func TestNestedNamespacePath(t *testing.T) {
	c := &badCube{}
	c.X.SetUint64(3)
	_, err := r1cs.Solve(c)
	var ue *r1cs.UnsatisfiedError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, 0, ue.Index)
	assert.Equal(t, "outer/inner", ue.Path)
}

// divergent enforces one more constraint when proving than in shape mode.
type divergent struct{}

func (divergent) Define(api r1cs.API) error {
	x := api.Private(fr.NewElement(0))
	api.Enforce(r1cs.V(x), r1cs.V(x), r1cs.V(x))
	if api.Proving() {
		api.Enforce(r1cs.V(x), r1cs.V(x), r1cs.V(x))
	}
	return nil
}

func TestShapeMismatch(t *testing.T) {
	sys, err := r1cs.Compile(divergent{})
	require.NoError(t, err)
	_, err = r1cs.Solve(divergent{}, r1cs.WithShape(sys))
	require.ErrorIs(t, err, r1cs.ErrShapeMismatch)
	_, err = r1cs.Solve(divergent{}, r1cs.WithShape(nil))
	require.Error(t, err)
}

type foreignVar struct{}

func (foreignVar) Define(api r1cs.API) error {
	api.Enforce(r1cs.V(r1cs.Variable(5)), r1cs.V(r1cs.One), r1cs.V(r1cs.One))
	return nil
}

type failing struct{}

func (failing) Define(r1cs.API) error { return errors.New("boom") }

func TestCompileErrors(t *testing.T) {
	_, err := r1cs.Compile(foreignVar{})
	assert.ErrorContains(t, err, "unknown variable")
	_, err = r1cs.Compile(failing{})
	assert.ErrorContains(t, err, "boom")
	_, err = r1cs.Solve(failing{})
	assert.ErrorContains(t, err, "boom")
}

// lcCircuit checks the LC helpers through constraints: each helper-built
// combination must equal its expected constant.
type lcCircuit struct{ want1, want2 uint64 }

func (c lcCircuit) Define(api r1cs.API) error {
	x := api.Private(fr.NewElement(4))
	y := api.Private(fr.NewElement(9))
	lc := r1cs.V(x).AddTerm(fr.NewElement(3), y).Sub(x).AddLC(r1cs.ConstUint64(2)) // 4 + 27 − 4 + 2
	api.Enforce(lc, r1cs.V(r1cs.One), r1cs.ConstUint64(c.want1))
	lc2 := r1cs.V(y).SubLC(r1cs.V(x).Scale(fr.NewElement(2))) // 9 − 8
	api.Enforce(lc2, r1cs.V(r1cs.One), r1cs.ConstUint64(c.want2))
	return nil
}

// sharedSquare passes one LC slice as both factors.
type sharedSquare struct{ x, y uint64 }

func (c sharedSquare) Define(api r1cs.API) error {
	x := api.Private(fr.NewElement(c.x))
	y := api.Private(fr.NewElement(c.y))
	lc := r1cs.V(x).AddLC(r1cs.ConstUint64(1)) // x + 1
	api.Enforce(lc, lc, r1cs.V(y))
	api.Enforce(lc[:1], lc, r1cs.V(y)) // same start, different length: x·(x+1)
	return nil
}

func TestSharedFactorSlices(t *testing.T) {
	_, err := r1cs.Solve(sharedSquare{3, 16})
	var ue *r1cs.UnsatisfiedError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, 1, ue.Index, "(x+1)² = 16 holds, x·(x+1) = 16 does not")
	_, err = r1cs.Solve(sharedSquare{3, 17})
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, 0, ue.Index)
}

func TestLCHelpers(t *testing.T) {
	_, err := r1cs.Solve(lcCircuit{29, 1})
	require.NoError(t, err)
	_, err = r1cs.Solve(lcCircuit{29, 2})
	var ue *r1cs.UnsatisfiedError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, 1, ue.Index)
	_, err = r1cs.Solve(lcCircuit{30, 1})
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, 0, ue.Index)

	x := r1cs.Variable(1) | r1cs.Variable(1<<31)
	assert.True(t, x.IsPrivate())
	assert.False(t, r1cs.One.IsPrivate())
	assert.Equal(t, 1, x.Index())
}

func TestCacheCompilesOncePerKey(t *testing.T) {
	var cache r1cs.Cache
	var wg sync.WaitGroup
	systems := make([]*r1cs.System, 8)
	for i := range systems {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sys, err := cache.Compile("chain/16", &r1cstest.MulChain{N: 16})
			assert.NoError(t, err)
			systems[i] = sys
		}()
	}
	wg.Wait()
	for _, s := range systems {
		assert.Same(t, systems[0], s)
	}
	_, err := cache.Compile("bad", failing{})
	require.Error(t, err)
	assert.Equal(t, 1, cache.Len(), "failed shapes are not cached")
}

func BenchmarkSynthesis(b *testing.B) {
	for _, logN := range []int{10, 14, 18} {
		n := 1<<logN - 4
		c := &r1cstest.MulChain{N: n, Seed: fr.NewElement(3)}
		sys, err := r1cs.Compile(c)
		require.NoError(b, err)
		b.Run(fmt.Sprintf("solve/2^%d", logN), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r1cs.Solve(c, r1cs.WithShape(sys)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "constraints/s")
		})
		b.Run(fmt.Sprintf("compile/2^%d", logN), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r1cs.Compile(c); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "constraints/s")
		})
	}
}

func TestCountsServeSolveWithoutMatrices(t *testing.T) {
	c := &r1cstest.MulChain{N: 3000, Seed: fr.NewElement(7)}
	sys, err := r1cs.Compile(c)
	require.NoError(t, err)
	counts := sys.Counts()
	assert.Nil(t, counts.A.Col)
	assert.Nil(t, counts.Coeffs)
	assert.Equal(t, sys.DomainSize(), counts.DomainSize())
	assert.Equal(t, sys.NbVariables(), counts.NbVariables())
	want, err := r1cs.Solve(c, r1cs.WithShape(sys))
	require.NoError(t, err)
	got, err := r1cs.Solve(c, r1cs.WithShape(counts))
	require.NoError(t, err)
	assert.Equal(t, want, got)
	elems := len(got.Public) + len(got.Private) + len(got.A) + len(got.B) + len(got.C)
	assert.Equal(t, int64(elems)*32, counts.AssignmentBytes(), "the bytes of the vectors a solve fills")
	_, err = r1cs.Solve(&r1cstest.MulChain{N: 2999, Seed: fr.NewElement(7)}, r1cs.WithShape(counts))
	assert.ErrorIs(t, err, r1cs.ErrShapeMismatch, "the counts still catch another shape")
}

func TestMulSmallIsMul(t *testing.T) {
	var r fr.Element
	_, err := r.SetRandom()
	require.NoError(t, err)
	vals := []fr.Element{{}, fr.One(), r, fr.NewElement(2)}
	for _, x := range vals {
		for _, y := range vals {
			var want, got fr.Element
			want.Mul(&x, &y)
			r1cs.MulSmall(&got, &x, &y)
			assert.Equal(t, want, got, "%s·%s", x.String(), y.String())
		}
	}
}
