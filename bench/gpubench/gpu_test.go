package gpubench

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/gpu"
)

// gpuBackend returns a GPU backend on GPU 0, closed with the test, skipping
// the test visibly where there is no GPU or no embedded kernels.
func gpuBackend(t *testing.T) *gpu.Backend {
	t.Helper()
	dev, err := OpenGPU()
	if errors.Is(err, ErrNoGPU) {
		t.Skipf("no GPU here: %v", err)
	}
	require.NoError(t, err)
	be, err := gpu.New(dev)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, be.Close())
		require.NoError(t, dev.Close())
	})
	return be
}

// The partition benchmark on the GPU backend: every pin set, h on the GPU
// or through the host, every warm-up check passes, and the GPU's records
// give each MSM's device stages.
func TestRunPartitionGPU(t *testing.T) {
	be := gpuBackend(t)
	for _, tc := range []struct {
		pin  PinSet
		fuse bool
	}{{PinNone, false}, {PinScalars, true}, {PinAll, true}} {
		cfg := PartitionConfig{Shape: Shape{Log: 14, Wires: 15000, BWires: 9000}, Runs: 1, Seed: 5, Tile: 256,
			Check: true, Bits: 0.9, Pin: tc.pin, HOnDevice: tc.fuse}
		p, err := NewPartition(cfg, be)
		require.NoError(t, err)
		res, err := RunPartition(context.Background(), cfg, p, be)
		require.NoError(t, err, "%s, fuse %v", tc.pin, tc.fuse)
		for _, ph := range []Phase{PhQuotient, PhA, PhB1, PhB2, PhLH} {
			assert.True(t, strings.HasPrefix(res.Checks[ph], "ok: "), "%s: %q", PhaseShort[ph], res.Checks[ph])
		}
		assert.Equal(t, tc.fuse, res.Checks[PhQLH] != "", "the fused run is checked when it runs")
		for _, ph := range []Phase{PhA, PhB1, PhB2} {
			assert.Positive(t, res.Phases.Compute[ph].Median(), "%s: device time", PhaseShort[ph])
			assert.Positive(t, res.Bits[ph], "%s: window bits", PhaseShort[ph])
		}
	}
}

// GPU proofs of porep-synth equal the CPU proofs byte for byte, timed and
// with the calls overlapping, with h on the GPU or through the host.
func TestBenchBackendGPU(t *testing.T) {
	be := gpuBackend(t)
	c, err := porep.New(1<<10, 7)
	require.NoError(t, err)
	pk, vk, info, err := DevKeys("", c, 3)
	require.NoError(t, err)
	ref, err := cpu.New()
	require.NoError(t, err)
	want, err := BenchBackend(context.Background(), "cpu", ref, ProveConfig{Runs: 1, Seed: 7}, c, info.Shape, pk, vk)
	require.NoError(t, err)
	for _, fuse := range []bool{true, false} {
		cfg := ProveConfig{Runs: 1, Seed: 7, Pinned: true, HOnDevice: fuse}
		res, err := BenchBackend(context.Background(), "gpu", be, cfg, c, info.Shape, pk, vk)
		require.NoError(t, err)
		assert.Empty(t, res.Failed)
		assert.Equal(t, want.Proofs, res.Proofs, "fuse %v", fuse)
		assert.Equal(t, 1, res.SameOverlapped)
		assert.Positive(t, SumMSMs(&res.Phases.Compute).Median(), "the GPU's MSM device times")
		assert.Equal(t, fuse, res.Points[PhQLH] > 0)
	}
}
