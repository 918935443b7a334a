package gpubench

import (
	"context"
	"strings"
	"testing"
	"time"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/bench/benchinput"
	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/gpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// gpuLikeCPU is the CPU backend with the GPU backend's optional calls, as
// their contracts state them: the fused quotient and L‖H call (a, b, c left
// unchanged), the B pair call and Prefetch (which changes nothing here).
type gpuLikeCPU struct{ *cpu.Backend }

func (b gpuLikeCPU) MSMQuotientLH(ctx context.Context, lh []bls12381.G1Affine, private, a, bv, c []fr.Element) (bls12381.G1Jac, error) {
	clone := func(v []fr.Element) []fr.Element { return append([]fr.Element(nil), v...) }
	h, err := b.QuotientH(ctx, clone(a), clone(bv), clone(c))
	if err != nil {
		return bls12381.G1Jac{}, err
	}
	return b.MSMG1(ctx, lh, append(clone(private), h[:len(a)-1]...))
}

func (b gpuLikeCPU) MSMB(ctx context.Context, g1 []bls12381.G1Affine, g2 []bls12381.G2Affine, s []fr.Element) (
	bls12381.G1Jac, bls12381.G2Jac, error) {
	p1, err := b.MSMG1(ctx, g1, s)
	if err != nil {
		return p1, bls12381.G2Jac{}, err
	}
	p2, err := b.MSMG2(ctx, g2, s)
	return p1, p2, err
}

func (gpuLikeCPU) Prefetch(context.Context, ...[]fr.Element) error { return nil }

// badG2 is the CPU backend with a G2 MSM that is off by the generator.
type badG2 struct{ *cpu.Backend }

func (b badG2) MSMG2(ctx context.Context, bases []bls12381.G2Affine, s []fr.Element) (bls12381.G2Jac, error) {
	p, err := b.Backend.MSMG2(ctx, bases, s)
	_, _, _, g := bls12381.Generators()
	p.AddMixed(&g)
	return p, err
}

// badQuotient is the CPU backend with a wrong quotient coefficient.
type badQuotient struct{ *cpu.Backend }

func (b badQuotient) QuotientH(ctx context.Context, a, bv, c []fr.Element) ([]fr.Element, error) {
	h, err := b.Backend.QuotientH(ctx, a, bv, c)
	if err == nil {
		h[3].Add(&h[3], new(fr.Element).SetOne())
	}
	return h, err
}

func smallPartition(t *testing.T, fuse bool) (PartitionConfig, *Partition) {
	t.Helper()
	cfg := PartitionConfig{Shape: Shape{Log: 10, Wires: 900, BWires: 500}, Runs: 2, Seed: 3, Tile: 64, Check: true,
		Bits: 0.5, HOnDevice: fuse}
	p, err := NewPartition(cfg, nil)
	require.NoError(t, err)
	return cfg, p
}

// The partition benchmark proves its synthetic key with groth16.Prove, and
// the warm-up's checks accept a correct backend's results: on the host path,
// and with the fused call, whose L‖H and proof equal the host path's.
func TestRunPartition(t *testing.T) {
	for _, fuse := range []bool{false, true} {
		cfg, p := smallPartition(t, fuse)
		inner, err := cpu.New()
		require.NoError(t, err)
		var be groth16.Backend = inner
		if fuse {
			be = gpuLikeCPU{inner}
		}
		res, err := RunPartition(context.Background(), cfg, p, be)
		require.NoError(t, err, "fuse %v", fuse)
		for _, ph := range []Phase{PhQuotient, PhA, PhB1, PhB2, PhLH} {
			assert.True(t, strings.HasPrefix(res.Checks[ph], "ok: "), "fuse %v, %s: %q", fuse, PhaseShort[ph], res.Checks[ph])
		}
		assert.Contains(t, res.Checks[PhLH], "folded to 2^6")
		assert.Len(t, res.Runs, cfg.Runs)
		assert.Positive(t, res.Warmup)
		s := cfg.Shape
		assert.Equal(t, s.Wires, res.Points[PhA])
		assert.Equal(t, s.BWires, res.Points[PhB1])
		assert.Equal(t, s.BWires, res.Points[PhB2])
		if fuse {
			assert.Equal(t, "ok: equals the host path's L‖H and proof", res.Checks[PhQLH])
			assert.Equal(t, s.LH(), res.Points[PhQLH], "timed runs take the fused call")
			assert.Zero(t, res.Points[PhLH])
		} else {
			assert.Empty(t, res.Checks[PhQLH])
			assert.Equal(t, s.LH(), res.Points[PhLH])
			assert.Equal(t, s.N(), res.Points[PhQuotient])
		}
		timed := []Phase{PhA, PhB1, PhB2}
		if fuse {
			// The B pair call: without a GPU record of its G2 MSM, its whole
			// wall is B1's.
			timed = []Phase{PhA, PhB1, PhQLH}
			assert.Zero(t, res.Phases.Wall[PhB2].Median())
		}
		for _, ph := range timed {
			assert.Len(t, res.Phases.Wall[ph], cfg.Runs)
			assert.Positive(t, res.Phases.Wall[ph].Median(), PhaseShort[ph])
		}
	}
}

// A wrong MSM or quotient fails the warm-up's checks, naming the phase.
func TestRunPartitionCatchesMismatch(t *testing.T) {
	inner, err := cpu.New()
	require.NoError(t, err)
	for _, tc := range []struct {
		be  groth16.Backend
		bad Phase
	}{{badG2{inner}, PhB2}, {badQuotient{inner}, PhQuotient}} {
		cfg, p := smallPartition(t, false)
		res, err := RunPartition(context.Background(), cfg, p, tc.be)
		require.ErrorIs(t, err, benchinput.ErrMismatch)
		assert.Equal(t, "MISMATCH", res.Checks[tc.bad])
		for ph := range PhQLH {
			if ph != tc.bad {
				assert.True(t, strings.HasPrefix(res.Checks[ph], "ok: "), "%s: %q", PhaseShort[ph], res.Checks[ph])
			}
		}
	}
	cfg, p := smallPartition(t, false)
	cfg.Pin = PinScalars
	_, err = RunPartition(context.Background(), cfg, p, inner)
	assert.ErrorContains(t, err, "allocates no host memory")
}

// The synthetic key is what Prove needs: L‖H adjacent (one MSM), B over
// the first BWires wires.
func TestSyntheticKey(t *testing.T) {
	s := Shape{Log: 6, Wires: 50, BWires: 20}
	_, p := smallPartition(t, false)
	pk := syntheticKey(s, p.G1Tile, p.G2Tile)
	assert.Equal(t, s.N(), pk.DomainSize)
	assert.Equal(t, s.Wires, pk.NbVariables())
	assert.Len(t, pk.G1.L, s.Wires-1)
	assert.Len(t, pk.G1.H, s.N()-1)
	endL := uintptr(unsafe.Pointer(&pk.G1.L[len(pk.G1.L)-1])) + unsafe.Sizeof(pk.G1.L[0])
	assert.Equal(t, endL, uintptr(unsafe.Pointer(&pk.G1.H[0])), "H follows L in one slice")
	kept := 0
	for _, inf := range pk.InfinityB {
		if !inf {
			kept++
		}
	}
	assert.Equal(t, s.BWires, kept)
	assert.Len(t, pk.G2.B, s.BWires)
}

// phaseTimesOf splits the fused call's wall by the GPU's quotient record,
// and the B pair call's by the GPU's G2 record.
func TestPhaseTimesOf(t *testing.T) {
	ms := time.Millisecond
	infos := []groth16.PhaseInfo{
		{Phase: groth16.PhaseQuotientLH, Duration: 50 * ms, Points: 300},
		{Phase: groth16.PhaseMSMA, Duration: 10 * ms, Points: 100},
		{Phase: groth16.PhaseMSMBPair, Duration: 30 * ms, Points: 80},
		{Phase: groth16.PhaseMSMSort, Duration: 99 * ms, Device: "gpu0", Call: groth16.PhaseMSMA},
		{Phase: groth16.PhaseProve, Duration: 95 * ms},
	}
	msms := []gpu.MSMTimings{
		{Call: groth16.PhaseMSMA, Upload: 1 * ms, Compute: 8 * ms, Sort: 2 * ms, Bits: 11},
		{Call: groth16.PhaseMSMB1, Upload: 2 * ms, Compute: 10 * ms, Bits: 10},
		{Call: groth16.PhaseMSMB2, Upload: 1 * ms, Compute: 12 * ms, Bits: 9},
		{Call: groth16.PhaseQuotientLH, Upload: 3 * ms, Compute: 20 * ms, Bits: 13},
	}
	quots := []gpu.QuotientTimings{{Call: groth16.PhaseQuotientLH, Compute: 15 * ms, Points: 256}}
	pt := phaseTimesOf(infos, msms, quots)
	assert.Equal(t, 15*ms, pt.Wall[PhQuotient])
	assert.Equal(t, 256, pt.Points[PhQuotient])
	assert.Equal(t, 35*ms, pt.Wall[PhQLH], "the fused call less its quotient")
	assert.Equal(t, 10*ms, pt.Wall[PhA])
	assert.Equal(t, 13*ms, pt.Wall[PhB2], "the G2 MSM's upload and device time")
	assert.Equal(t, 17*ms, pt.Wall[PhB1], "the pair less its G2 MSM")
	assert.Equal(t, [2]int{80, 80}, [2]int{pt.Points[PhB1], pt.Points[PhB2]})
	assert.Equal(t, 2*ms, pt.Stage[PhA][StSort], "stages from the records, not the sub-phases")
	assert.Equal(t, 8*ms, pt.Compute[PhA])
	assert.Equal(t, 13, pt.Bits[PhQLH])
	assert.Zero(t, pt.Points[PhLH])
}

// A Recorder takes the GPU's records from groth16's trace (the Detail of
// a sub-phase), ignores the phases without one, and passes every phase on
// to a trace already in the context.
func TestRecorderReadsDetails(t *testing.T) {
	var outer groth16.PhaseTimes
	var r Recorder
	_, err := r.LastMSM()
	require.Error(t, err, "no MSM yet")
	ctx := r.Context(groth16.WithTrace(context.Background(), outer.Trace()))
	m := gpu.MSMTimings{Call: groth16.PhaseMSMA, Upload: time.Millisecond, Compute: 3 * time.Millisecond, Bits: 12}
	q := gpu.QuotientTimings{Call: groth16.PhaseQuotientLH, Compute: 2 * time.Millisecond, Points: 64}
	for _, i := range []groth16.PhaseInfo{
		{Phase: groth16.PhaseMSMSort, Duration: time.Millisecond, Device: "gpu0"},
		{Phase: groth16.PhaseMSMWindow, Duration: time.Millisecond, Device: "gpu0", Detail: m},
		{Phase: groth16.PhaseQuotientCompute, Duration: 2 * time.Millisecond, Device: "gpu0", Detail: q},
		{Phase: groth16.PhaseMSMA, Duration: 5 * time.Millisecond},
	} {
		groth16.PhaseDone(ctx, i)
	}
	last, err := r.LastMSM()
	require.NoError(t, err)
	assert.Equal(t, m, last)
	assert.Len(t, outer.Infos(), 4, "the outer trace sees every phase")
	pt := r.Take([]groth16.PhaseInfo{{Phase: groth16.PhaseMSMA, Duration: 5 * time.Millisecond, Points: 10},
		{Phase: groth16.PhaseQuotientLH, Duration: 9 * time.Millisecond}})
	assert.Equal(t, 3*time.Millisecond, pt.Compute[PhA])
	assert.Equal(t, 12, pt.Bits[PhA])
	assert.Equal(t, 2*time.Millisecond, pt.Wall[PhQuotient], "the quotient's record splits the fused call")
	assert.Equal(t, 7*time.Millisecond, pt.Wall[PhQLH])
	assert.Equal(t, PhaseTimes{}, r.Take(nil), "Take forgets the records")
}

// slowG1 is the CPU backend with G1 MSMs that take at least 30 ms.
type slowG1 struct{ *cpu.Backend }

func (b slowG1) MSMG1(ctx context.Context, bases []bls12381.G1Affine, s []fr.Element) (bls12381.G1Jac, error) {
	time.Sleep(30 * time.Millisecond)
	return b.Backend.MSMG1(ctx, bases, s)
}

// Serial runs calls one at a time and times each from when it holds the
// backend, not from when it was made; it keeps each result by phase.
func TestSerialTimesCallsAlone(t *testing.T) {
	inner, err := cpu.New()
	require.NoError(t, err)
	sb := NewSerial(slowG1{inner})
	be := sb.Backend(true)
	bases := benchinput.RandomG1(8, 1)
	s := benchinput.RandomScalars(8, 2)
	start := time.Now()
	errs := make(chan error, 2)
	for _, ph := range []groth16.Phase{groth16.PhaseMSMA, groth16.PhaseMSMB1} {
		go func() {
			_, err := be.MSMG1(groth16.WithCall(context.Background(), ph), bases, s)
			errs <- err
		}()
	}
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	wall := time.Since(start)
	calls := sb.TakeCalls()
	require.Len(t, calls, 2)
	assert.ElementsMatch(t, []groth16.Phase{groth16.PhaseMSMA, groth16.PhaseMSMB1}, []groth16.Phase{calls[0].Phase, calls[1].Phase})
	assert.GreaterOrEqual(t, wall, 60*time.Millisecond, "one after another")
	for _, c := range calls {
		assert.GreaterOrEqual(t, c.Duration, 30*time.Millisecond)
		assert.Less(t, c.Duration, wall-25*time.Millisecond, "%s: its own time, not the wait", c.Phase)
		assert.Equal(t, 8, c.Points)
	}
	assert.False(t, calls[1].Start.Before(calls[0].Start.Add(calls[0].Duration)), "the second starts after the first")
	sums := sb.TakeSums()
	want, err := inner.MSMG1(context.Background(), bases, s)
	require.NoError(t, err)
	for _, ph := range []groth16.Phase{groth16.PhaseMSMA, groth16.PhaseMSMB1} {
		got := sums.G1[ph]
		assert.True(t, want.Equal(&got), ph)
	}
	assert.Empty(t, sb.TakeCalls(), "taken")
}
