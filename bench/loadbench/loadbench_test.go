package loadbench

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/client"
	"github.com/cuzk-dev/cuzk/daemon/keys"
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
	cfg := C2Config{Constraints: 1024, Partitions: 3, Proofs: 3, Backend: "cpu", MaxRSS: 64 << 30, SynthesisWorkers: 3}
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
	lo, hi := res.SynthesisWorkers()
	assert.Equal(t, [2]int{3, 3}, [2]int{lo, hi}, "every partition solved on the configured synthesis_workers")
	assert.Equal(t, 2*res.PartitionBytes, res.JobBudget, "two partitions' vectors by default")
	assert.Positive(t, res.KeyLoad)
	assert.Positive(t, res.Steady)
	assert.Equal(t, 2, res.SteadyIntervals, "3 proofs: 2 intervals between the first and the last completion")
	assert.LessOrEqual(t, res.Steady, res.Report.Wall)
	assert.Positive(t, res.Single)
	assert.InDelta(t, 1, res.SteadyBusy, 0.5, "one device proving nearly all the time")
	assert.Zero(t, res.EventBusy, "the CPU backend reports no CUDA-event stages")
	assert.Positive(t, res.PeakRSS)
	assert.Positive(t, res.LoadRSS)
	assert.LessOrEqual(t, res.LoadRSS, res.WarmRSS, "a high-water mark only grows")
	assert.LessOrEqual(t, res.WarmRSS, res.PeakRSS)
	require.NoError(t, res.memErr)
	assert.Positive(t, res.provingMem.RSS, "where the resident set lay was read")
	assert.Zero(t, res.provingMem.Vectors, "the CPU backend solves on the Go heap")
	assert.Zero(t, res.GPUPeak, "the CPU reports no device memory")
	assert.True(t, res.OK(cfg))
	var out bytes.Buffer
	require.NoError(t, res.Write(&out, cfg))
	for _, want := range []string{"per partition (9)", "synthesis", "steady state (2 intervals", "single proof: 3 partitions alone",
		"pipeline fill included",
		"every partition proof verified by the client: PASS", "peak host RSS", "by the key's load ", "1 synthesizer(s) of 3 goroutines", "synthesis goroutines a partition's solve ran on: 3 to 3",
		"partitions whose quotient found its A evaluations sent ahead: 0 of 9 (0.00 GiB", "  resident ", " by mapping: ", "anonymous ",
		"solved vectors (out of heap) 0.00 GiB, Go heap ", " resident (objects "} {
		assert.Contains(t, out.String(), want)
	}
	assert.True(t, res.provingMem.GoHeapFound, "the Go heap's mappings")
	assert.GreaterOrEqual(t, res.provingMem.rest(), int64(-16<<20), "the breakdown adds up")
	_, err = RunC2(ctx, C2Config{Constraints: 1024, Proofs: 1})
	assert.ErrorContains(t, err, "partitions and proofs must be positive")
	_, err = RunC2(ctx, C2Config{Constraints: 1024, Partitions: 1, Proofs: 1, Slots: -1})
	assert.ErrorContains(t, err, "cannot be negative")
	_, err = RunC2(ctx, C2Config{Constraints: 1024, Partitions: 1, Proofs: 1, SynthesisWorkers: -1})
	assert.ErrorContains(t, err, "cannot be negative")
}

// Device busy by CUDA events sums the event-timed stages of every
// partition (and nothing host-timed) over the wall; steady state counts
// the proofs after the first over the span between the first and the last
// completion.
func TestEventBusy(t *testing.T) {
	part := func(ms ...int64) *pb.PartitionResult {
		ph := map[string]int64{
			"quotient and msm L‖H: quotient compute": 900e6, // host wall: not counted
			"quotient and msm L‖H: quotient device":  ms[0] * 1e6,
			"msm A: msm sort":                        ms[1] * 1e6,
			"msm A: msm accumulate":                  ms[2] * 1e6,
			"msm B1: msm reduce":                     ms[3] * 1e6,
			"msm B2: msm window":                     ms[4] * 1e6,
			"msm A: msm upload":                      50e6, // host wall: not counted
			"msm A: msm idle":                        70e6, // the device idle between chunks: not counted
			"msm A: msm lead":                        30e6, // nor before the first chunk
			"prove":                                  5e9,
		}
		return &pb.PartitionResult{Timings: &pb.Timings{PhasesNs: ph}}
	}
	t0 := time.Unix(1000, 0)
	rep := &client.Report{Wall: 4 * time.Second, Proofs: []client.Proof{
		{Index: 1, End: t0.Add(3 * time.Second), Result: &pb.ProofResult{Partitions: []*pb.PartitionResult{part(500, 100, 200, 100, 100)}}},
		{Index: 0, End: t0.Add(1 * time.Second), Result: &pb.ProofResult{Partitions: []*pb.PartitionResult{part(400, 100, 100, 100, 100)}}},
	}}
	assert.Equal(t, 800*time.Millisecond, eventTime(rep.Proofs[1].Result.GetPartitions()[0].GetTimings().GetPhasesNs()))
	all, steady := eventBusy(rep, 1)
	assert.InDelta(t, 1.8/4, all, 1e-9)
	assert.InDelta(t, 1.0/2, steady, 1e-9, "the later proof's 1 s over the 2 s between completions")
	all2, _ := eventBusy(rep, 2)
	assert.InDelta(t, all/2, all2, 1e-9)
}

// The device's idle time a partition splits into the chunked MSMs' idle
// and lead sub-phases and the rest of the turn that no event-timed stage
// covers; partitions without event-timed work (the CPU backend) are left
// out.
func TestDeviceIdle(t *testing.T) {
	part := func(prove, quotient, sort, idleA, idleLH, leadA int64) *pb.PartitionResult {
		ph := map[string]int64{
			"quotient and msm L‖H: quotient device": quotient * 1e6,
			"msm A: msm sort":                       sort * 1e6,
			"msm A: msm upload":                     40e6, // host wall
			"msm A: msm idle":                       idleA * 1e6,
			"quotient and msm L‖H: msm idle":        idleLH * 1e6,
			"msm A: msm lead":                       leadA * 1e6,
		}
		return &pb.PartitionResult{Timings: &pb.Timings{PhasesNs: ph, ProveNs: prove * 1e6}}
	}
	cpu := &pb.PartitionResult{Timings: &pb.Timings{PhasesNs: map[string]int64{"prove": 9e9}, ProveNs: 9e9}}
	r := &C2Result{Report: &client.Report{Proofs: []client.Proof{
		{Result: &pb.ProofResult{Partitions: []*pb.PartitionResult{part(1000, 300, 500, 30, 50, 20), cpu}}},
		{Result: &pb.ProofResult{Partitions: []*pb.PartitionResult{part(1200, 300, 600, 10, 30, 40)}}},
	}}}
	between, lead, elsewhere := r.DeviceIdle()
	assert.Equal(t, 60*time.Millisecond, between, "(80 + 40) / 2")
	assert.Equal(t, 30*time.Millisecond, lead, "(20 + 40) / 2")
	assert.Equal(t, 160*time.Millisecond, elsewhere, "((1000 - 800 - 80 - 20) + (1200 - 900 - 40 - 40)) / 2")
	none := &C2Result{Report: &client.Report{Proofs: []client.Proof{{Result: &pb.ProofResult{Partitions: []*pb.PartitionResult{cpu}}}}}}
	between, lead, elsewhere = none.DeviceIdle()
	assert.Zero(t, between)
	assert.Zero(t, lead)
	assert.Zero(t, elsewhere)
}

func TestBusyPerDevice(t *testing.T) {
	a := busySample{perDevice: map[string]float64{"gpu0": 1, "gpu1": 2}}
	b := busySample{perDevice: map[string]float64{"gpu0": 10, "gpu1": 6}}
	got := busyBetween(a, b, 10*time.Second)
	assert.InDelta(t, 0.9, got["gpu0"], 1e-9)
	assert.InDelta(t, 0.4, got["gpu1"], 1e-9)
	assert.Equal(t, "gpu0 90 %, gpu1 40 %", perDeviceString(got))
}

// TestSteadyIsOverTheIntervalsBetweenCompletions: out-of-order completions
// are sorted; n completions give n−1 intervals; one gives the wall from the
// start.
func TestSteadyIsOverTheIntervalsBetweenCompletions(t *testing.T) {
	t0 := time.Unix(1000, 0)
	rep := &client.Report{Proofs: []client.Proof{{End: t0.Add(30 * time.Second)}, {End: t0.Add(10 * time.Second)},
		{End: t0.Add(50 * time.Second)}, {End: t0.Add(20 * time.Second)}}}
	d, n := steadyOf(rep, t0)
	assert.Equal(t, 3, n)
	assert.Equal(t, 40*time.Second/3, d)
	d, n = steadyOf(&client.Report{Proofs: rep.Proofs[:1]}, t0)
	assert.Equal(t, 0, n)
	assert.Equal(t, 30*time.Second, d)
	d, n = steadyOf(&client.Report{}, t0)
	assert.Zero(t, d)
	assert.Zero(t, n)
}

// TestRunC2FromARawKeyFile is the H200's "key ready from a raw file" run on
// the CPU: a first run with a key directory writes the development key as
// its raw key file (no .pk), a second maps it, says so, and is held to the
// key-ready target; every partition verifies both times.
func TestRunC2FromARawKeyFile(t *testing.T) {
	dir := t.TempDir()
	cfg := C2Config{Constraints: 1024, Partitions: 2, Proofs: 1, Backend: "cpu", KeyDir: dir, MaxKeyReady: time.Hour}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	first, err := RunC2(ctx, cfg)
	require.NoError(t, err)
	assert.Empty(t, first.KeyFile, "the first run sets the key up")
	raw, err := filepath.Glob(filepath.Join(dir, "*"+keys.RawExt))
	require.NoError(t, err)
	require.Len(t, raw, 1, "the setup left its raw key file")
	pks, err := filepath.Glob(filepath.Join(dir, "*.pk"))
	require.NoError(t, err)
	assert.Empty(t, pks, "and no .pk")
	var out bytes.Buffer
	require.NoError(t, first.Write(&out, cfg))
	assert.Contains(t, out.String(), "(compile, development setup, upload)")
	assert.NotContains(t, out.String(), "from a raw key file")

	second, err := RunC2(ctx, cfg)
	require.NoError(t, err)
	assert.Equal(t, raw[0], second.KeyFile)
	assert.Empty(t, second.Report.Failures)
	assert.True(t, second.OK(cfg))
	out.Reset()
	require.NoError(t, second.Write(&out, cfg))
	assert.Contains(t, out.String(), "(compile, map and verify "+raw[0]+", upload)")
	assert.Contains(t, out.String(), "(target ≤ 3600.00 s from a raw key file)  PASS")
	assert.Contains(t, out.String(), "  of which the key's load ")

	cfg.MaxKeyReady = time.Nanosecond
	assert.False(t, second.OK(cfg), "a key slower than its target fails the run")
}
