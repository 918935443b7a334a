package keyfile_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
	"github.com/cuzk-dev/cuzk/prover/r1cs/r1cstest"
)

// fixture is a circuit with its development keys.
type fixture struct {
	pk  *groth16.ProvingKey
	vk  *groth16.VerifyingKey
	c   r1cs.Circuit
	sys *r1cs.System
}

// solve returns a fresh assignment (Prove overwrites its a, b, c).
func (f fixture) solve(t *testing.T) *r1cs.Assignment {
	t.Helper()
	asg, err := r1cs.Solve(f.c, r1cs.WithShape(f.sys))
	require.NoError(t, err)
	return asg
}

func newFixture(t *testing.T, c r1cs.Circuit) fixture {
	t.Helper()
	sys, err := r1cs.Compile(c)
	require.NoError(t, err)
	pk, vk, err := groth16.Setup(sys, devkeys.Rand(7, 0))
	require.NoError(t, err)
	return fixture{pk, vk, c, sys}
}

func porepFixture(t *testing.T) fixture {
	t.Helper()
	c, err := porep.New(porep.MinTarget, 3)
	require.NoError(t, err)
	return newFixture(t, c)
}

func encode(t *testing.T, pk *groth16.ProvingKey) []byte {
	t.Helper()
	var buf bytes.Buffer
	_, err := pk.WriteTo(&buf)
	require.NoError(t, err)
	return buf.Bytes()
}

func prove(t *testing.T, f fixture, pk *groth16.ProvingKey) *groth16.Proof {
	t.Helper()
	backend, err := cpu.New()
	require.NoError(t, err)
	asg := f.solve(t)
	public := asg.PublicInputs()
	proof, err := groth16.Prove(context.Background(), pk, asg, backend, devkeys.Rand(7, 1))
	require.NoError(t, err)
	require.NoError(t, groth16.Verify(f.vk, proof, public))
	return proof
}

func TestRoundTripAndSameProof(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(t *testing.T) fixture
	}{
		{"cubic", func(t *testing.T) fixture { return newFixture(t, r1cstest.NewCubic(3)) }},
		{"porep-synth-1024", porepFixture},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f(t)
			path := filepath.Join(t.TempDir(), "k.rawpk")
			require.NoError(t, keyfile.Write(path, f.pk))
			k, err := keyfile.Open(path)
			require.NoError(t, err)
			defer func() { assert.NoError(t, k.Close()) }()

			assert.True(t, k.Header.Checked(), "Write checks the points by default")
			st, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, st.Size(), keyfile.FileSize(groth16.SizeFor(f.sys, f.sys.Density())), "FileSize from the System")
			assert.Equal(t, int64(k.Header.FileSize), keyfile.FileSize(groth16.SizeOf(f.pk)))
			assert.Equal(t, f.pk.G1, k.PK.G1)
			assert.Equal(t, f.pk.G2, k.PK.G2)
			assert.Equal(t, f.pk.InfinityA, k.PK.InfinityA)
			assert.Equal(t, f.pk.InfinityB, k.PK.InfinityB)
			g1, _ := k.PK.Bases()
			assert.Len(t, g1, 3, "L‖H stay adjacent, so Prove's fused MSM applies")
			assert.Equal(t, encode(t, f.pk), encode(t, k.PK), "the compressed encoding comes back byte for byte")
			assert.Equal(t, prove(t, f, f.pk), prove(t, f, k.PK), "the mapped key proves the same proof")
		})
	}
}

func TestImportFromCompressedEncoding(t *testing.T) {
	f := newFixture(t, r1cstest.NewCubic(5))
	enc := encode(t, f.pk)
	path := filepath.Join(t.TempDir(), "k.rawpk")
	require.NoError(t, keyfile.Import(path, bytes.NewReader(enc)))
	k, err := keyfile.Open(path, keyfile.RequireChecked())
	require.NoError(t, err)
	defer k.Close()
	assert.Equal(t, enc, encode(t, k.PK))

	err = keyfile.Import(filepath.Join(t.TempDir(), "bad.rawpk"), bytes.NewReader(enc[:len(enc)-1]))
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.ErrorContains(t, err, "bad.rawpk")
}

func TestChecksAndTheFlag(t *testing.T) {
	f := newFixture(t, r1cstest.NewCubic(3))
	dir := t.TempDir()
	unchecked := filepath.Join(dir, "unchecked.rawpk")
	require.NoError(t, keyfile.Write(unchecked, f.pk, keyfile.SkipChecks()))
	k, err := keyfile.Open(unchecked)
	require.NoError(t, err)
	assert.False(t, k.Header.Checked())
	require.NoError(t, k.Close())
	_, err = keyfile.Open(unchecked, keyfile.RequireChecked())
	require.ErrorIs(t, err, keyfile.ErrCorrupt)
	assert.ErrorContains(t, err, unchecked)

	bad := *f.pk
	bad.G1.A = append(bad.G1.A[:0:0], f.pk.G1.A...)
	bad.G1.A[1].X.SetOne() // (1, y) is not on the curve
	err = keyfile.Write(filepath.Join(dir, "bad.rawpk"), &bad)
	require.Error(t, err)
	assert.ErrorContains(t, err, "A[1]")
	assert.NoFileExists(t, filepath.Join(dir, "bad.rawpk"), "nothing is written for a bad key")
	require.NoError(t, keyfile.Write(filepath.Join(dir, "unchecked-bad.rawpk"), &bad, keyfile.SkipChecks()),
		"SkipChecks trusts the key")
}

func TestConcurrentProversOnOneMappedKey(t *testing.T) {
	f := newFixture(t, r1cstest.NewCubic(3))
	path := filepath.Join(t.TempDir(), "k.rawpk")
	require.NoError(t, keyfile.Write(path, f.pk))
	k, err := keyfile.Open(path, keyfile.SkipVerify())
	require.NoError(t, err)
	want := prove(t, f, f.pk)
	var wg sync.WaitGroup
	proofs := make([]*groth16.Proof, 4)
	for i := range proofs {
		asg := f.solve(t)
		wg.Go(func() {
			backend, err := cpu.New()
			if err == nil {
				proofs[i], err = groth16.Prove(context.Background(), k.PK, asg, backend, devkeys.Rand(7, 1))
			}
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	for _, p := range proofs {
		assert.Equal(t, want, p)
	}
	require.NoError(t, k.Close())
	require.NoError(t, k.Close(), "a second Close does nothing")
}

func TestWriteRejectsAnInconsistentKey(t *testing.T) {
	f := newFixture(t, r1cstest.NewCubic(3))
	bad := *f.pk
	bad.InfinityA = bad.InfinityA[:1]
	err := keyfile.Write(filepath.Join(t.TempDir(), "k.rawpk"), &bad)
	assert.ErrorContains(t, err, "inconsistent key")
}

func TestPopulateOpensTheSameKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.rawpk")
	pk := syntheticKey(1 << 10)
	require.NoError(t, keyfile.Write(path, pk, keyfile.SkipChecks()))
	plain, err := keyfile.Open(path)
	require.NoError(t, err)
	defer func() { require.NoError(t, plain.Close()) }()
	pop, err := keyfile.Open(path, keyfile.Populate(), keyfile.SkipVerify())
	require.NoError(t, err)
	defer func() { require.NoError(t, pop.Close()) }()
	assert.Equal(t, plain.PK.G1.A, pop.PK.G1.A)
	assert.Equal(t, plain.PK.G2.B, pop.PK.G2.B)
	assert.Equal(t, plain.Header, pop.Header)
}
