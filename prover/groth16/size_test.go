package groth16_test

import (
	"context"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
	"github.com/cuzk-dev/cuzk/prover/r1cs/r1cstest"
)

// TestSizeForIsTheSetupKeysSize: a key Setup makes has the size its
// System's density gives, section by section.
func TestSizeForIsTheSetupKeysSize(t *testing.T) {
	sys, err := r1cs.Compile(r1cstest.NewCubic(3))
	require.NoError(t, err)
	pk, _, err := groth16.Setup(sys, devkeys.Rand(1, 0))
	require.NoError(t, err)
	want := groth16.SizeFor(sys, sys.Density())
	assert.Equal(t, want, groth16.SizeOf(pk))
	assert.Equal(t, int64(len(pk.G1.A)+len(pk.G1.B)+len(pk.G1.L)+len(pk.G1.H)), want.G1Points())
	assert.Equal(t, int64(len(pk.G2.B)), want.G2Points())
	assert.Equal(t, want.G1Points()*96+want.G2Points()*192, want.Bytes())
}

// countingFixedBase records the scalars SetupWith hands to each call.
type countingFixedBase struct {
	groth16.CPUFixedBase
	g1, g2 int
}

func (c *countingFixedBase) FixedBaseG1(ctx context.Context, base *bls12381.G1Affine, s []fr.Element) ([]bls12381.G1Affine, error) {
	c.g1 += len(s)
	return c.CPUFixedBase.FixedBaseG1(ctx, base, s)
}

func (c *countingFixedBase) FixedBaseG2(ctx context.Context, base *bls12381.G2Affine, s []fr.Element) ([]bls12381.G2Affine, error) {
	c.g2 += len(s)
	return c.CPUFixedBase.FixedBaseG2(ctx, base, s)
}

// TestSetupScratchBoundsTheScalarBatches: the bound holds the Lagrange
// values, the three column sums and the scalar batches SetupWith really
// hands to its FixedBaser, with at most the few single points to spare.
func TestSetupScratchBoundsTheScalarBatches(t *testing.T) {
	sys, err := r1cs.Compile(r1cstest.NewCubic(3))
	require.NoError(t, err)
	var fb countingFixedBase
	_, _, err = groth16.SetupWith(context.Background(), sys, devkeys.Rand(1, 0), &fb)
	require.NoError(t, err)
	size := groth16.SizeFor(sys, sys.Density())
	used := 32 * int64(sys.DomainSize()+3*sys.NbVariables()+fb.g1+fb.g2)
	got := size.SetupScratchBytes()
	assert.GreaterOrEqual(t, got, used, "the bound covers what Setup holds")
	assert.LessOrEqual(t, got-used, int64(8*32), "and no more than the single points beside")
}
