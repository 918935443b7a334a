package groth16_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// gnarkFixedBase is the FixedBaser of gnark-crypto's batch scalar
// multiplication, the reference every FixedBaser must equal.
type gnarkFixedBase struct{}

func (gnarkFixedBase) FixedBaseG1(_ context.Context, base *bls12381.G1Affine, s []fr.Element) ([]bls12381.G1Affine, error) {
	return bls12381.BatchScalarMultiplicationG1(base, s), nil
}

func (gnarkFixedBase) FixedBaseG2(_ context.Context, base *bls12381.G2Affine, s []fr.Element) ([]bls12381.G2Affine, error) {
	return bls12381.BatchScalarMultiplicationG2(base, s), nil
}

// keyBytes returns the encodings of pk and vk.
func keyBytes(t *testing.T, pk *groth16.ProvingKey, vk *groth16.VerifyingKey) ([]byte, []byte) {
	t.Helper()
	var p, v bytes.Buffer
	_, err := pk.WriteTo(&p)
	require.NoError(t, err)
	_, err = vk.WriteTo(&v)
	require.NoError(t, err)
	return p.Bytes(), v.Bytes()
}

func porepSystem(t *testing.T, target int) *r1cs.System {
	t.Helper()
	c, err := porep.New(target, 5)
	require.NoError(t, err)
	sys, err := r1cs.Compile(c)
	require.NoError(t, err)
	return sys
}

// TestSetupWithMatchesSetup checks that SetupWith gives Setup's keys byte
// for byte with gnark-crypto's batch multiplication, with CPUFixedBase and
// with nil, for the same randomness.
func TestSetupWithMatchesSetup(t *testing.T) {
	sys := porepSystem(t, 1<<11)
	pk, vk, err := groth16.Setup(sys, seeded(9))
	require.NoError(t, err)
	wantPK, wantVK := keyBytes(t, pk, vk)
	for name, fb := range map[string]groth16.FixedBaser{"gnark": gnarkFixedBase{}, "cpu": groth16.CPUFixedBase{}, "nil": nil} {
		pk, vk, err := groth16.SetupWith(context.Background(), sys, seeded(9), fb)
		require.NoError(t, err, name)
		gotPK, gotVK := keyBytes(t, pk, vk)
		assert.True(t, bytes.Equal(wantPK, gotPK), "%s: proving key differs", name)
		assert.True(t, bytes.Equal(wantVK, gotVK), "%s: verifying key differs", name)
	}
}

// badFixedBase fails G1 or G2, or returns one point too few.
type badFixedBase struct {
	err   error
	g2    bool
	short bool
}

func (b badFixedBase) FixedBaseG1(ctx context.Context, base *bls12381.G1Affine, s []fr.Element) ([]bls12381.G1Affine, error) {
	if b.g2 {
		return groth16.CPUFixedBase{}.FixedBaseG1(ctx, base, s)
	}
	if b.short {
		return bls12381.BatchScalarMultiplicationG1(base, s[1:]), nil
	}
	return nil, b.err
}

func (b badFixedBase) FixedBaseG2(ctx context.Context, base *bls12381.G2Affine, s []fr.Element) ([]bls12381.G2Affine, error) {
	if b.short {
		return bls12381.BatchScalarMultiplicationG2(base, s[1:]), nil
	}
	return nil, b.err
}

// TestSetupWithErrors checks that a FixedBaser's failure, a short result
// and a done context end SetupWith with an error naming the step.
func TestSetupWithErrors(t *testing.T) {
	sys := porepSystem(t, porep.MinTarget)
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		fb   groth16.FixedBaser
		want string
	}{
		{"g1 error", badFixedBase{err: boom}, "fixed-base G1"},
		{"g2 error", badFixedBase{err: boom, g2: true}, "fixed-base G2"},
		{"g1 short", badFixedBase{short: true}, "points for"},
		{"g2 short", badFixedBase{short: true, g2: true}, "fixed-base G2"},
	} {
		_, _, err := groth16.SetupWith(context.Background(), sys, seeded(3), tc.fb)
		require.Error(t, err, tc.name)
		assert.ErrorContains(t, err, tc.want, tc.name)
		if !tc.fb.(badFixedBase).short {
			assert.ErrorIs(t, err, boom, tc.name)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := groth16.SetupWith(ctx, sys, seeded(3), gnarkFixedBase{})
	require.ErrorIs(t, err, context.Canceled)
	_, _, err = groth16.SetupWith(context.Background(), sys, io.LimitReader(seeded(3), 10), nil)
	require.Error(t, err, "short randomness")
}

// TestSetupKeyPinned pins the bytes of a porep-synth development key, so
// that a change to the setup's arithmetic or layout that alters a key
// (which every earlier key file and daemon cache would then disagree with)
// cannot pass unnoticed.
func TestSetupKeyPinned(t *testing.T) {
	sys := porepSystem(t, 1<<12)
	pk, vk, err := groth16.Setup(sys, devkeys.Rand(7, 0))
	require.NoError(t, err)
	p, v := keyBytes(t, pk, vk)
	assert.Equal(t, "54c22f287220191f4e9ae2c3db774aff6cf669fa38c13141ce37f93da70f1a9d", fmt.Sprintf("%x", sha256.Sum256(append(p, v...))))
}
