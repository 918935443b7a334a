package gpubench

import (
	"context"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// wrongG2 is the CPU FixedBaser with the last G2 point negated.
type wrongG2 struct{ groth16.CPUFixedBase }

func (w wrongG2) FixedBaseG2(ctx context.Context, base *bls12381.G2Affine, s []fr.Element) ([]bls12381.G2Affine, error) {
	p, err := w.CPUFixedBase.FixedBaseG2(ctx, base, s)
	if err == nil {
		p[len(p)-1].Neg(&p[len(p)-1])
	}
	return p, err
}

// TestRunSetupCPU checks the split of a CPU setup and that the check finds
// equal keys equal and a wrong point different.
func TestRunSetupCPU(t *testing.T) {
	res, err := RunSetup(context.Background(), SetupConfig{Log: 10, Seed: 3, Check: true}, nil)
	require.NoError(t, err)
	assert.True(t, res.Checked)
	assert.True(t, res.Same, "the same setup twice gives the same keys")
	assert.Greater(t, res.G1Points, res.Domain, "G1 points")
	assert.Positive(t, res.G2Points)
	assert.Positive(t, res.G1)
	assert.Positive(t, res.G2)
	assert.Equal(t, res.Setup, res.G1+res.G2+res.Rest)
	assert.Positive(t, res.KeyBytes)

	bad, err := RunSetup(context.Background(), SetupConfig{Log: 10, Seed: 3, Check: true}, wrongG2{})
	require.NoError(t, err)
	assert.True(t, bad.Checked)
	assert.False(t, bad.Same, "a wrong G2 point must give other key bytes")
	assert.Equal(t, res.KeySHA256, bad.CPUKeySHA256)

	_, err = RunSetup(context.Background(), SetupConfig{Log: 40}, nil)
	require.Error(t, err)
}

// TestRunSetupGPU checks a GPU setup at 2^16 against the CPU setup's key
// bytes.
func TestRunSetupGPU(t *testing.T) {
	be := gpuBackend(t)
	res, err := RunSetup(context.Background(), SetupConfig{Log: 16, Seed: 1, Check: true}, be)
	require.NoError(t, err)
	require.True(t, res.Checked)
	assert.True(t, res.Same, "GPU setup keys differ from the CPU setup's")
	t.Logf("setup 2^16: %s (G1 %s, G2 %s, rest %s), CPU %s", res.Setup, res.G1, res.G2, res.Rest, res.CPUSetup)
}
