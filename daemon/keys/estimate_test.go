package keys

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
	"github.com/cuzk-dev/cuzk/prover/r1cs/r1cstest"
)

// TestEstimateIsTheKeysSize: the estimate a key's shape gives before any
// compile (porep's own densities, or the counting pass) is the size of
// the key devkeys makes, exactly for the counting pass and within porep's
// documented bound (the head's columns plus two a challenge, each a G1 and
// a G2 point at most), and the raw key file's size follows from it.
func TestEstimateIsTheKeysSize(t *testing.T) {
	m, err := New(Config{Dir: t.TempDir()})
	require.NoError(t, err)
	dir := t.TempDir()
	for _, tc := range []struct {
		id     string
		params map[string]uint64
	}{
		{"porep-c2", map[string]uint64{"constraints": 4096}},
		{"porep-c2", map[string]uint64{"constraints": 1 << 14}},
		{"porep-synth", map[string]uint64{"constraints": 4096}},
		{"sha256", map[string]uint64{"bytes": 1}},
		{"poseidon-merkle", map[string]uint64{"depth": 2}},
	} {
		c, err := registry.Default().Resolve(tc.id, tc.params)
		require.NoError(t, err)
		t.Run(c.Key, func(t *testing.T) {
			sh, err := m.Shape(context.Background(), c)
			require.NoError(t, err)
			require.NotNil(t, sh.Sys.Columns, "the shape knows its densities")
			ex, err := c.Example(1)
			require.NoError(t, err)
			circ, err := c.Circuit(ex)
			require.NoError(t, err)
			full, err := r1cs.Compile(circ)
			require.NoError(t, err)
			pk, _, info, err := devkeys.Get(dir, FileName(c.Key), full, 1, devkeys.WithRawFile())
			require.NoError(t, err)

			real := keyBytes(pk)
			assert.Equal(t, real, EstimateBytes(full), "from the matrices: exact")
			est := EstimateBytes(sh.Sys)
			assert.GreaterOrEqual(t, est, real, "never below the key")
			slack := int64(0) // the counting pass is exact
			if _, known, _ := c.Counts(); known {
				slack = int64(full.NbPublic+255+2*full.NbPublic) * (groth16.G1Bytes + groth16.G2Bytes)
			}
			assert.LessOrEqual(t, est-real, slack)
			t.Logf("key %d bytes, estimate %d (+%d), all wires in A and B %d", real, est, est-real, allWires(full))

			st, err := os.Stat(info.RawPath)
			require.NoError(t, err)
			assert.Equal(t, st.Size(), keyfile.FileSize(groth16.SizeOf(pk)), "raw key file")
			assert.Equal(t, st.Size(), keyfile.FileSize(groth16.SizeFor(full, full.Density())), "raw key file from the matrices")
		})
	}
}

// TestEstimateOfACompiledSystem: a Setup key of a small reference circuit
// has the estimate's size; counts alone give an upper bound.
func TestEstimateOfACompiledSystem(t *testing.T) {
	sys, err := r1cs.Compile(r1cstest.NewCubic(3))
	require.NoError(t, err)
	pk, _, err := groth16.Setup(sys, devkeys.Rand(1, 0))
	require.NoError(t, err)
	assert.Equal(t, keyBytes(pk), EstimateBytes(sys))
	assert.Equal(t, allWires(sys), EstimateBytes(sys.Counts()), "no densities: every wire in A and B")
	assert.Greater(t, EstimateBytes(sys.Counts()), keyBytes(pk))
}

func allWires(sys *r1cs.System) int64 {
	nv := sys.NbVariables()
	return groth16.SizeFor(sys, r1cs.Density{Columns: nv, A: nv, B: nv}).Bytes()
}

// TestEstimateOfTheC2Key: porep-c2 at 2^27, sized from its densities
// without a compile, against what its key held on an H200's device
// (docs/runs/h200-c2-porep-c2-overlap.log: "device 46.05 GiB", the old
// every-wire estimate 71.71 GiB).
func TestEstimateOfTheC2Key(t *testing.T) {
	c, err := registry.Default().Resolve("porep-c2", map[string]uint64{"constraints": 1 << 27})
	require.NoError(t, err)
	counts, _, err := c.Counts()
	require.NoError(t, err)
	got := float64(EstimateBytes(counts)) / (1 << 30)
	t.Logf("porep-c2 2^27: key estimate %.2f GiB", got)
	assert.InDelta(t, 46.05, got, 0.01, "the key the device held, in GiB")
}
