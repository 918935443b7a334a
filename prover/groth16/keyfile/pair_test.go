package keyfile_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
	"github.com/cuzk-dev/cuzk/prover/r1cs/r1cstest"
)

// TestCheckPairTellsSetupsApart: a key's own verifying key pairs with it;
// one of another setup of the same circuit, or with another count of
// public inputs, does not, and the error names both files.
func TestCheckPairTellsSetupsApart(t *testing.T) {
	sys, err := r1cs.Compile(&r1cstest.MulChain{N: 5})
	require.NoError(t, err)
	pk1, vk1, err := groth16.Setup(sys, devkeys.Rand(1, 0))
	require.NoError(t, err)
	_, vk2, err := groth16.Setup(sys, devkeys.Rand(2, 0))
	require.NoError(t, err)
	require.NoError(t, keyfile.CheckPair("a.rawpk", pk1, "a.vk", vk1))
	assert.Equal(t, keyfile.PKFingerprint(pk1), keyfile.VKFingerprint(vk1))
	err = keyfile.CheckPair("a.rawpk", pk1, "b.vk", vk2)
	require.ErrorIs(t, err, keyfile.ErrNotAPair)
	assert.Contains(t, err.Error(), "a.rawpk is of setup "+keyfile.PKFingerprint(pk1).String())
	assert.Contains(t, err.Error(), "b.vk of setup "+keyfile.VKFingerprint(vk2).String())
	short := *vk1
	short.G1.IC = short.G1.IC[:len(short.G1.IC)-1]
	err = keyfile.CheckPair("a.rawpk", pk1, "c.vk", &short)
	require.ErrorIs(t, err, keyfile.ErrNotAPair)
	assert.Contains(t, err.Error(), "public inputs")
}
