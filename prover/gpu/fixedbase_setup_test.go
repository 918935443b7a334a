package gpu

import (
	"bytes"
	"context"
	"fmt"
	mrand "math/rand/v2"
	"testing"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

var _ groth16.FixedBaser = (*Backend)(nil)

// emulatedFixedBase is a groth16.FixedBaser that runs the fixed-base
// kernels' code on the host (testdata/fixed_base_emulate.cc), with the
// Backend's window choice and tables.
type emulatedFixedBase struct {
	t   *testing.T
	bin string
}

func (e emulatedFixedBase) FixedBaseG1(_ context.Context, base *bls12381.G1Affine, s []fr.Element) ([]bls12381.G1Affine, error) {
	c := fixedBaseWindow(len(s))
	raw := emulateFixedBase(e.t, e.bin, 1, c, driver.Bytes(fixedBaseTableG1(base, c)), s)
	return unsafe.Slice((*bls12381.G1Affine)(unsafe.Pointer(&raw[0])), len(s)), nil
}

func (e emulatedFixedBase) FixedBaseG2(_ context.Context, base *bls12381.G2Affine, s []fr.Element) ([]bls12381.G2Affine, error) {
	c := fixedBaseWindow(len(s))
	raw := emulateFixedBase(e.t, e.bin, 2, c, driver.Bytes(fixedBaseTableG2(base, c)), s)
	return unsafe.Slice((*bls12381.G2Affine)(unsafe.Pointer(&raw[0])), len(s)), nil
}

// setupKeys compiles porep-synth with target constraints and returns the
// encoded keys of groth16.SetupWith(fb) for a fixed seed.
func setupKeys(t *testing.T, target int, fb groth16.FixedBaser) ([]byte, []byte) {
	t.Helper()
	c, err := porep.New(target, 1)
	require.NoError(t, err)
	sys, err := r1cs.Compile(c)
	require.NoError(t, err)
	var key [32]byte
	key[0] = 42
	pk, vk, err := groth16.SetupWith(context.Background(), sys, mrand.NewChaCha8(key), fb)
	require.NoError(t, err)
	var p, v bytes.Buffer
	_, err = pk.WriteTo(&p)
	require.NoError(t, err)
	_, err = vk.WriteTo(&v)
	require.NoError(t, err)
	return p.Bytes(), v.Bytes()
}

// TestSetupWithEmulatedKernelsMatchesCPU runs a porep-synth setup with the
// key points from the emulated fixed-base kernels and checks that the key
// bytes equal the CPU setup's for the same seed.
func TestSetupWithEmulatedKernelsMatchesCPU(t *testing.T) {
	bin := buildHostKernels(t, "fixed_base_emulate")
	wantPK, wantVK := setupKeys(t, 1<<11, nil)
	gotPK, gotVK := setupKeys(t, 1<<11, emulatedFixedBase{t: t, bin: bin})
	assert.True(t, bytes.Equal(wantPK, gotPK), "proving key differs (%d against %d bytes)", len(gotPK), len(wantPK))
	assert.True(t, bytes.Equal(wantVK, gotVK), "verifying key differs")
}

// TestGPUSetupMatchesCPU checks that groth16.SetupWith on the GPU Backend
// gives the CPU setup's keys byte for byte, porep-synth at 2^16 (and 2^20
// without -short), the same seed.
func TestGPUSetupMatchesCPU(t *testing.T) {
	b := testBackend(t)
	sizes := []int{1 << 16, 1 << 20}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, target := range sizes {
		t.Run(fmt.Sprintf("porep-synth-%d", target), func(t *testing.T) {
			wantPK, wantVK := setupKeys(t, target, nil)
			gotPK, gotVK := setupKeys(t, target, b)
			assert.True(t, bytes.Equal(wantPK, gotPK), "proving key differs (%d against %d bytes)", len(gotPK), len(wantPK))
			assert.True(t, bytes.Equal(wantVK, gotVK), "verifying key differs")
		})
	}
}
