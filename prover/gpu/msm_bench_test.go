package gpu

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/internal/testseed"
)

// msmBenchDistinct is how many distinct random points the benchmarks
// compute; larger inputs repeat them (the scalars are all fresh).
const msmBenchDistinct = 1 << 16

// msmVerifyMax is the largest benchmark size whose result is also checked
// against gnark-crypto (once, before timing).
const msmVerifyMax = 1 << 22

// BenchmarkMSMG1 times G1 MSMs on resident bases with CUDA events after one
// warm-up call. Metrics: gpu-ms (digits through window sums, median),
// upload-ms (scalars to the device, median), the stage times, the window
// size c and the table copies read.
func BenchmarkMSMG1(b *testing.B) { benchMSMG1(b, 0) }

// BenchmarkMSMG1Table is BenchmarkMSMG1 with full tables of base multiples
// (SetTableMemory); bases-ms is the warm-up's upload and table build.
func BenchmarkMSMG1Table(b *testing.B) { benchMSMG1(b, msmBenchTables) }

// BenchmarkMSMG2 is BenchmarkMSMG1 over G2.
func BenchmarkMSMG2(b *testing.B) { benchMSMG2(b, 0) }

// BenchmarkMSMG2Table is BenchmarkMSMG1Table over G2.
func BenchmarkMSMG2Table(b *testing.B) { benchMSMG2(b, msmBenchTables) }

// BenchmarkMSMG1Bits is BenchmarkMSMG1 on scalars of which 9 in 10 are
// random bits (edgeScalars "bits"): millions of digits in one bucket, as in
// a witness of bit-valued wires.
func BenchmarkMSMG1Bits(b *testing.B) { benchMSMG1On(b, 0, "bits", []int{22, 24, 26}) }

// msmBenchTables is the table budget of the table benchmarks: enough for a
// full table at every size they run.
const msmBenchTables = 1 << 40

func benchMSMG1(b *testing.B, tables int64) {
	benchMSMG1On(b, tables, "random", []int{16, 20, 22, 24, 26})
}

// benchMSMG1On runs the G1 benchmark at sizes 2^logs on scalars of kind
// (edgeScalars).
func benchMSMG1On(b *testing.B, tables int64, kind string, logs []int) {
	m := testMSM(b)
	rng := newTestRand(testseed.Seed(b))
	require.NoError(b, m.SetTableMemory(tables))
	defer func() { require.NoError(b, m.SetTableMemory(0)) }()
	for _, logN := range logs {
		n := 1 << logN
		b.Run(fmt.Sprintf("2^%d", logN), func(b *testing.B) {
			bases := randG1(n, msmBenchDistinct, rng)
			scalars := edgeScalars(kind, n, rng)
			var log msmLog
			got, err := m.G1(log.context(), bases, scalars) // warm-up: uploads the bases
			require.NoError(b, err)
			warm := log.last(b)
			if n <= msmVerifyMax {
				var want bls12381.G1Jac
				_, err := want.MultiExp(bases, scalars, ecc.MultiExpConfig{})
				require.NoError(b, err)
				require.True(b, got.Equal(&want), "2^%d: GPU G1 MSM differs from gnark-crypto", logN)
			}
			benchMSM(b, func(ctx context.Context) error {
				_, err := m.G1(ctx, bases, scalars)
				return err
			})
			b.ReportMetric(float64(warm.Bases)/float64(time.Millisecond), "bases-ms")
			require.NoError(b, m.EvictBases())
		})
	}
}

func benchMSMG2(b *testing.B, tables int64) {
	m := testMSM(b)
	rng := newTestRand(testseed.Seed(b))
	require.NoError(b, m.SetTableMemory(tables))
	defer func() { require.NoError(b, m.SetTableMemory(0)) }()
	for _, logN := range []int{16, 20, 24} {
		n := 1 << logN
		b.Run(fmt.Sprintf("2^%d", logN), func(b *testing.B) {
			bases := randG2(n, msmBenchDistinct, rng)
			scalars := randScalars(n, rng)
			var log msmLog
			got, err := m.G2(log.context(), bases, scalars)
			require.NoError(b, err)
			warm := log.last(b)
			if n <= 1<<20 {
				var want bls12381.G2Jac
				_, err := want.MultiExp(bases, scalars, ecc.MultiExpConfig{})
				require.NoError(b, err)
				require.True(b, got.Equal(&want), "2^%d: GPU G2 MSM differs from gnark-crypto", logN)
			}
			benchMSM(b, func(ctx context.Context) error {
				_, err := m.G2(ctx, bases, scalars)
				return err
			})
			b.ReportMetric(float64(warm.Bases)/float64(time.Millisecond), "bases-ms")
			require.NoError(b, m.EvictBases())
		})
	}
}

// BenchmarkMSMG1Window times G1 MSMs at forced window sizes around the cost
// model's choice (newMSMPlan), to check it against the device.
func BenchmarkMSMG1Window(b *testing.B) {
	m := testMSM(b)
	rng := newTestRand(testseed.Seed(b))
	defer func() { require.NoError(b, m.setWindow(0)) }()
	for _, logN := range []int{20, 24, 26} {
		n := 1 << logN
		bases := randG1(n, msmBenchDistinct, rng)
		scalars := randScalars(n, rng)
		var want bls12381.G1Jac
		_, err := want.MultiExp(bases, scalars, ecc.MultiExpConfig{})
		require.NoError(b, err)
		plan, err := newMSMPlan(n, 1)
		require.NoError(b, err)
		model := plan.c
		for _, c := range windowCandidates(model) {
			b.Run(fmt.Sprintf("2^%d/c=%d", logN, c), func(b *testing.B) {
				require.NoError(b, m.setWindow(c))
				got, err := m.G1(context.Background(), bases, scalars)
				require.NoError(b, err)
				require.True(b, got.Equal(&want), "c=%d: GPU G1 MSM differs from gnark-crypto", c)
				benchMSM(b, func(ctx context.Context) error {
					_, err := m.G1(ctx, bases, scalars)
					return err
				})
				if c == model {
					b.ReportMetric(1, "model")
				}
			})
		}
		require.NoError(b, m.EvictBases())
	}
}

// windowCandidates is the model's window and its neighbours that differ in
// window count (13, 16, 18 and 20 bits bracket the large sizes).
func windowCandidates(model uint32) []uint32 {
	out := []uint32{model}
	for _, c := range []uint32{13, 16, 18, 20} {
		if c != model {
			out = append(out, c)
		}
	}
	return out
}

// benchMSM runs call b.N times (with a context that records its MSM) and reports the median device times of the
// whole MSM and of each stage.
func benchMSM(b *testing.B, call func(context.Context) error) {
	var ts []MSMTimings
	var log msmLog
	ctx := log.context()
	b.ResetTimer()
	for range b.N {
		require.NoError(b, call(ctx))
		ts = append(ts, log.last(b))
	}
	b.StopTimer()
	median := func(f func(MSMTimings) time.Duration) float64 {
		d := make([]time.Duration, len(ts))
		for i, t := range ts {
			d[i] = f(t)
		}
		return medianMs(d)
	}
	b.ReportMetric(median(func(t MSMTimings) time.Duration { return t.Compute }), "gpu-ms")
	b.ReportMetric(median(func(t MSMTimings) time.Duration { return t.Upload }), "upload-ms")
	b.ReportMetric(median(func(t MSMTimings) time.Duration { return t.Sort }), "sort-ms")
	b.ReportMetric(median(func(t MSMTimings) time.Duration { return t.Accumulate }), "acc-ms")
	b.ReportMetric(median(func(t MSMTimings) time.Duration { return t.Reduce }), "reduce-ms")
	b.ReportMetric(median(func(t MSMTimings) time.Duration { return t.Window }), "window-ms")
	b.ReportMetric(float64(ts[0].Bits), "c")
	b.ReportMetric(float64(ts[0].Copies), "copies")
}
