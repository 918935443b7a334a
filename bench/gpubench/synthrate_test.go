package gpubench

import (
	"context"
	"slices"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

func TestSynthRate(t *testing.T) {
	res, err := SynthRate(context.Background(), SynthConfig{Target: 4096 + 37, Seed: 2, Runs: 2, Workers: 3, Sequential: true})
	require.NoError(t, err)
	assert.True(t, res.Identical)
	assert.Len(t, res.Parallel.Wall, 2)
	assert.Len(t, res.Sequential.CPU, 2)
	assert.Equal(t, res.Layout.Constraints(), res.Constraints)
	assert.Positive(t, res.Parallel.Rate(res.Constraints))
	assert.Positive(t, res.Sequential.CPURate(res.Constraints))
	w := res.Witness
	c, err := porep.New(4096+37, 2)
	require.NoError(t, err)
	sys, err := r1cs.Compile(c)
	require.NoError(t, err)
	assert.Equal(t, sys.NbVariables(), w.Zero+w.One+w.Other)

	res, err = SynthRate(context.Background(), SynthConfig{Target: 1 << 10, Seed: 1, Runs: 1, Workers: 2})
	require.NoError(t, err)
	assert.False(t, res.Identical, "not compared")
	assert.Empty(t, res.Sequential.Wall)

	_, err = SynthRate(context.Background(), SynthConfig{Target: 1 << 10, Runs: 1, Workers: 1})
	assert.Error(t, err)
	_, err = SynthRate(context.Background(), SynthConfig{Target: 1 << 10, Runs: 0, Workers: 2})
	assert.Error(t, err)
}

func TestSameAssignment(t *testing.T) {
	c, err := porep.New(1<<12, 1)
	require.NoError(t, err)
	a, err := r1cs.Solve(c)
	require.NoError(t, err)
	b, err := r1cs.Solve(c, r1cs.WithWorkers(2))
	require.NoError(t, err)
	require.True(t, sameAssignment(a, b))
	for _, v := range []*[]fr.Element{&b.Private, &b.C} {
		orig := slices.Clone(*v)
		(*v)[len(*v)-1].SetUint64(77)
		assert.False(t, sameAssignment(a, b))
		*v = orig
	}
	b.A = b.A[:len(b.A)-1]
	assert.False(t, sameAssignment(a, b))
}
