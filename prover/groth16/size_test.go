package groth16_test

import (
	"testing"

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
