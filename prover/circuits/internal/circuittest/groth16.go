package circuittest

import (
	"context"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// ProveAndVerify runs c end to end through Groth16 on the CPU backend with a
// development setup: the proof must verify against the circuit's public
// inputs and fail against the same inputs with the first one changed.
func ProveAndVerify(t testing.TB, c r1cs.Circuit) {
	t.Helper()
	sys, err := r1cs.Compile(c)
	require.NoError(t, err)
	pk, vk, err := groth16.Setup(sys, rand.Reader)
	require.NoError(t, err)
	asg, err := r1cs.Solve(c, r1cs.WithShape(sys))
	require.NoError(t, err)
	public := append([]fr.Element(nil), asg.PublicInputs()...)
	backend, err := cpu.New()
	require.NoError(t, err)
	proof, err := groth16.Prove(context.Background(), pk, asg, backend, rand.Reader)
	require.NoError(t, err)
	require.NoError(t, groth16.Verify(vk, proof, public))

	require.NotEmpty(t, public)
	wrong := append([]fr.Element(nil), public...)
	one := fr.One()
	wrong[0].Add(&wrong[0], &one)
	err = groth16.Verify(vk, proof, wrong)
	require.True(t, errors.Is(err, groth16.ErrInvalidProof), "verify with a changed public input: %v", err)
}
