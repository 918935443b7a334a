package loadbench

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunSmallOnCPU(t *testing.T) {
	cfg := Config{Constraints: 1024, N: 3, Concurrencies: []int{1, 2}, Backend: "cpu", Direct: true, Critical: 3}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Run(ctx, cfg)
	require.NoError(t, err)
	require.Len(t, res.Rows, 2)
	for _, r := range res.Rows {
		assert.Len(t, r.Report.Proofs, 3)
		assert.Empty(t, r.Report.Failures)
		assert.Positive(t, r.P50)
		assert.GreaterOrEqual(t, r.P99, r.P50)
	}
	assert.Equal(t, "cpu", res.Backend)
	assert.Positive(t, res.Direct)
	assert.Positive(t, res.CriticalWait)
	assert.Positive(t, res.GPUJob)
	var out bytes.Buffer
	require.NoError(t, res.Write(&out, cfg))
	assert.Contains(t, out.String(), "concurrency")
	assert.Contains(t, out.String(), "overhead per proof")
	assert.Contains(t, out.String(), "CRITICAL behind 3 NORMAL")
	assert.Contains(t, out.String(), "every proof verified by the client: PASS")
}

func TestRunC2SmallOnCPU(t *testing.T) {
	cfg := C2Config{Constraints: 1024, Partitions: 3, Proofs: 3, Backend: "cpu", MaxRSS: 64 << 30}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := RunC2(ctx, cfg)
	require.NoError(t, err)
	require.Len(t, res.Report.Proofs, 3)
	assert.Empty(t, res.Report.Failures)
	for _, p := range res.Report.Proofs {
		assert.Len(t, p.Result.GetPartitions(), 3, "proof %d", p.Index)
		assert.Len(t, p.Result.GetProofsCompressed(), 3*192)
	}
	assert.Equal(t, "cpu", res.Backend)
	assert.Equal(t, 2*res.PartitionBytes, res.JobBudget, "two partitions' vectors by default")
	assert.Positive(t, res.KeyLoad)
	assert.Positive(t, res.Steady)
	assert.LessOrEqual(t, res.Steady, res.Report.Wall)
	assert.InDelta(t, 1, res.SteadyBusy, 0.5, "one device proving nearly all the time")
	assert.Positive(t, res.PeakRSS)
	assert.Zero(t, res.GPUPeak, "the CPU reports no device memory")
	assert.True(t, res.OK(cfg))
	var out bytes.Buffer
	require.NoError(t, res.Write(&out, cfg))
	for _, want := range []string{"per partition (9)", "synthesis", "steady state (last two proofs)",
		"every partition proof verified by the client: PASS", "peak host RSS"} {
		assert.Contains(t, out.String(), want)
	}
	_, err = RunC2(ctx, C2Config{Constraints: 1024, Proofs: 1})
	assert.ErrorContains(t, err, "partitions and proofs must be positive")
	_, err = RunC2(ctx, C2Config{Constraints: 1024, Partitions: 1, Proofs: 1, Slots: -1})
	assert.ErrorContains(t, err, "cannot be negative")
}

func TestBusyPerDevice(t *testing.T) {
	a := busySample{perDevice: map[string]float64{"gpu0": 1, "gpu1": 2}}
	b := busySample{perDevice: map[string]float64{"gpu0": 10, "gpu1": 6}}
	got := busyBetween(a, b, 10*time.Second)
	assert.InDelta(t, 0.9, got["gpu0"], 1e-9)
	assert.InDelta(t, 0.4, got["gpu1"], 1e-9)
	assert.Equal(t, "gpu0 90 %, gpu1 40 %", perDeviceString(got))
}
