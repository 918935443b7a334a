package selftest

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

func TestOperandsLeadWithEveryEdgePair(t *testing.T) {
	e := edges()
	xs, ys := operands(rand.New(rand.NewPCG(1, 1)), 40)
	for i := range len(e) * len(e) {
		assert.Equal(t, e[i/len(e)], xs[i], "x %d", i)
		assert.Equal(t, e[i%len(e)], ys[i], "y %d", i)
	}
	for i := range xs {
		assert.True(t, less(&xs[i], &modulus), "x %d not reduced", i)
		assert.True(t, less(&ys[i], &modulus), "y %d not reduced", i)
	}
	assert.NotEqual(t, xs[len(e)*len(e)], xs[len(e)*len(e)+1], "random operands must differ")
}

func TestEdgesAreTheAdvertisedValues(t *testing.T) {
	e := edges()
	require.Len(t, e, 5)
	assert.True(t, e[0].IsZero())
	assert.True(t, e[1].IsOne())
	var sum fr.Element
	sum.Add(&e[1], &e[2])
	assert.True(t, sum.IsZero(), "edge 2 is r-1")
	assert.Equal(t, fr.Element{1}, e[3])
	assert.Equal(t, modulus[0]-1, e[4][0])
	assert.Equal(t, fr.Element{0xffffffff00000001, 0x53bda402fffe5bfe, 0x3339d80809a1d805, 0x73eda753299d7d48}, modulus,
		"r from gnark-crypto must match cuda/include/cuzk/fr.cuh")
}

func TestRandomElementIsReducedAndSpread(t *testing.T) {
	rnd := rand.New(rand.NewPCG(2, 3))
	var high int
	for range 10000 {
		e := randomElement(rnd)
		require.True(t, less(&e, &modulus))
		if e[3] > modulus[3]/2 {
			high++
		}
	}
	assert.InDelta(t, 5000, high, 400, "top limbs should spread over [0, r)")
}

func TestPrepareFollowsGnark(t *testing.T) {
	xs, ys := operands(rand.New(rand.NewPCG(4, 5)), 64)
	byName := map[string]kernelCase{}
	for _, k := range cases {
		byName[k.fn] = k
	}
	require.Len(t, byName, 8)
	chain := byName["fr_mul_chain"]
	var zero, one, two fr.Element
	one.SetOne()
	two.Add(&one, &one)
	_, _, w := chain.expect(&zero, &xs[30])
	assert.True(t, w.IsZero(), "a chain from x = 0 stays 0")
	_, _, w = chain.expect(&one, &one)
	assert.Equal(t, two, w, "a chain from 1, 1 ends at 1 + 1")
	assert.Equal(t, 2*mulChain, chain.muls)
	a, _, want := byName["fr_to_mont"].prepare(xs, ys)
	_, _, back := byName["fr_from_mont"].prepare(want, ys)
	assert.Equal(t, a, back, "to_mont then from_mont is the identity")
	assert.Equal(t, xs, want)
	a, b, want := byName["fr_sub"].prepare(xs, ys)
	for i := range want {
		var s fr.Element
		s.Add(&want[i], &b[i])
		assert.Equal(t, a[i], s, "(x-y)+y = x at %d", i)
	}
	_, b, _ = byName["fr_sqr"].prepare(xs, ys)
	assert.Nil(t, b, "unary kernels get no b input")
}

func TestCompareFindsEveryMismatch(t *testing.T) {
	want := make([]fr.Element, 10)
	for i := range want {
		want[i] = fr.Element{uint64(i)}
	}
	tests := []struct {
		name    string
		corrupt []int
		first   int
	}{
		{"equal", nil, -1},
		{"one", []int{7}, 7},
		{"several", []int{2, 3, 9}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := append([]fr.Element(nil), want...)
			for _, i := range tt.corrupt {
				got[i][3] ^= 1 << 40
			}
			m, first := compare(got, want)
			assert.Equal(t, len(tt.corrupt), m)
			assert.Equal(t, tt.first, first)
		})
	}
}

func TestReportVerdicts(t *testing.T) {
	rep := Report{Device: "GPU 0: test", Elements: 4}
	for _, k := range cases {
		rep.Results = append(rep.Results, Result{Kernel: k.fn, Unit: k.unit, Elements: 4, First: -1, GPUTime: time.Microsecond})
	}
	assert.True(t, rep.OK())
	assert.InDelta(t, 4e6, rep.Results[0].PerSecond(), 1)
	for i, k := range cases {
		rep.Results[i].MulsPerElement = k.muls
		if k.fn == "fr_mul_chain" {
			assert.InDelta(t, 4e6*float64(2*mulChain), rep.Results[i].MulsPerSecond(), 1)
		} else {
			assert.Zero(t, rep.Results[i].MulsPerSecond(), k.fn)
		}
	}
	assert.Contains(t, rep.String(), "(0.1 Gmul/s)")
	rep.Results[3].Mismatches, rep.Results[3].First, rep.Results[3].Detail = 2, 1, "a=..."
	assert.False(t, rep.OK())
	assert.Contains(t, rep.String(), "FAIL 2 mismatches, first at 1")
	assert.False(t, Report{Results: rep.Results[:2]}.OK(), "a partial run is not OK")
	assert.Equal(t, 1+len(cases), strings.Count(rep.String(), "\n"))
}

func TestRunRejectsEmpty(t *testing.T) {
	_, err := Run(context.Background(), nil, rand.New(rand.NewPCG(1, 1)), 0)
	assert.ErrorContains(t, err, "at least 1")
}

func TestRunWithoutGPUReturnsSentinel(t *testing.T) {
	if n, err := driver.Count(); err == nil {
		t.Skipf("a CUDA device is present (%d); the no-GPU path is not reachable here", n)
	}
	_, err := Run(context.Background(), nil, rand.New(rand.NewPCG(1, 1)), 8)
	require.Error(t, err)
	assert.True(t, errors.Is(err, driver.ErrNoGPU), "got %v", err)
}
