package gpu

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// msmLog records the MSM and quotient records (groth16.PhaseInfo.Detail)
// of the calls made with its context.
type msmLog struct {
	mu    sync.Mutex
	msms  []MSMTimings
	quots []QuotientTimings
}

// record keeps the GPU record that info carries, if any.
func (l *msmLog) record(info groth16.PhaseInfo) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch d := info.Detail.(type) {
	case MSMTimings:
		l.msms = append(l.msms, d)
	case QuotientTimings:
		l.quots = append(l.quots, d)
	}
}

// context returns a context whose calls report to l.
func (l *msmLog) context() context.Context {
	return groth16.WithTrace(context.Background(), &groth16.Trace{PhaseDone: l.record})
}

// last returns the latest MSM record, failing the test when there is none.
func (l *msmLog) last(t testing.TB) MSMTimings {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	require.NotEmpty(t, l.msms, "no MSM reported")
	return l.msms[len(l.msms)-1]
}

// take returns the MSM records and forgets them.
func (l *msmLog) take() []MSMTimings {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.msms
	l.msms = nil
	return r
}

// phaseLog returns a context whose calls report each phase to a
// groth16.PhaseTimes and each GPU record to an msmLog.
func phaseLog() (context.Context, *groth16.PhaseTimes, *msmLog) {
	var pt groth16.PhaseTimes
	var l msmLog
	all := pt.Trace()
	return groth16.WithTrace(context.Background(), &groth16.Trace{PhaseDone: func(i groth16.PhaseInfo) {
		all.PhaseDone(i)
		l.record(i)
	}}), &pt, &l
}

// An MSM's record reaches groth16's trace as the Detail of its last
// stage, with its Call filled in; the phases and their durations are
// those of the record's parts, each once, whatever the record carries.
func TestReportMSM(t *testing.T) {
	ms := time.Millisecond
	t0 := time.Unix(1000, 0)
	rec := MSMTimings{Upload: 3 * ms, Sort: 1 * ms, Accumulate: 5 * ms, Reduce: 2 * ms, Window: 4 * ms, Compute: 12 * ms,
		Points: 100, Bits: 11, Copies: 2, Windows: 12}
	for _, tc := range []struct {
		name   string
		bases  time.Duration
		chunks int
		want   []groth16.Phase
	}{
		{"resident bases", 0, 1, []groth16.Phase{groth16.PhaseMSMUpload, groth16.PhaseMSMSort, groth16.PhaseMSMAccumulate,
			groth16.PhaseMSMReduce, groth16.PhaseMSMWindow}},
		{"bases uploaded", 7 * ms, 1, []groth16.Phase{groth16.PhaseMSMBases, groth16.PhaseMSMUpload, groth16.PhaseMSMSort,
			groth16.PhaseMSMAccumulate, groth16.PhaseMSMReduce, groth16.PhaseMSMWindow}},
		{"in chunks", 0, 4, []groth16.Phase{groth16.PhaseMSMUpload, groth16.PhaseMSMLead, groth16.PhaseMSMIdle, groth16.PhaseMSMSort,
			groth16.PhaseMSMAccumulate, groth16.PhaseMSMReduce, groth16.PhaseMSMWindow}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, pt, log := phaseLog()
			r := rec
			r.Bases, r.Chunks = tc.bases, tc.chunks
			if tc.chunks > 1 {
				r.Lead, r.Idle = 8*ms, 6*ms
			}
			reportMSM(groth16.WithCall(ctx, groth16.PhaseMSMA), "gpu1",
				msmStarts{bases: t0, upload: t0.Add(tc.bases), pipeline: t0.Add(tc.bases + r.Upload)}, r)
			infos := pt.Infos()
			var got []groth16.Phase
			for _, i := range infos {
				got = append(got, i.Phase)
				assert.Equal(t, "gpu1", i.Device, i.Phase)
				assert.Equal(t, groth16.PhaseMSMA, i.Call, i.Phase)
				assert.Equal(t, 100, i.Points, i.Phase)
			}
			require.Equal(t, tc.want, got, "the same sub-phases as without a record, in order")
			for _, i := range infos[:len(infos)-1] {
				assert.Nil(t, i.Detail, "%s carries no record", i.Phase)
			}
			want := r
			want.Call = groth16.PhaseMSMA
			assert.Equal(t, want, infos[len(infos)-1].Detail, "the record rides on the last stage")
			assert.Equal(t, []MSMTimings{want}, log.take())
			assert.Equal(t, t0.Add(tc.bases+r.Upload+r.Sort+r.Accumulate+r.Reduce), infos[len(infos)-1].Start,
				"the stages follow one another")
			d := map[groth16.Phase]time.Duration{groth16.PhaseMSMUpload: r.Upload, groth16.PhaseMSMSort: r.Sort,
				groth16.PhaseMSMAccumulate: r.Accumulate, groth16.PhaseMSMReduce: r.Reduce, groth16.PhaseMSMWindow: r.Window}
			if r.Bases > 0 {
				d[groth16.PhaseMSMBases] = r.Bases
			}
			if r.Chunks > 1 {
				d[groth16.PhaseMSMLead], d[groth16.PhaseMSMIdle] = r.Lead, r.Idle
			}
			assert.Equal(t, d, pt.Durations(), "each part once, no phase for the record")
		})
	}
}

// A quotient's record reaches groth16's trace as the Detail of its last
// sub-phase: the download when h came down, else the device span, else
// the compute.
func TestReportQuotient(t *testing.T) {
	ms := time.Millisecond
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct {
		name string
		q    QuotientTimings
		want []groth16.Phase
	}{
		{"downloaded", QuotientTimings{Compute: 9 * ms, Device: 8 * ms, Download: 4 * ms, Points: 64},
			[]groth16.Phase{groth16.PhaseQuotientCompute, groth16.PhaseQuotientDevice, groth16.PhaseQuotientDownload}},
		{"h on the device", QuotientTimings{Compute: 9 * ms, Device: 8 * ms, Points: 64},
			[]groth16.Phase{groth16.PhaseQuotientCompute, groth16.PhaseQuotientDevice}},
		{"no device span", QuotientTimings{Compute: 9 * ms, Points: 64}, []groth16.Phase{groth16.PhaseQuotientCompute}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, pt, log := phaseLog()
			reportQuotient(groth16.WithCall(ctx, groth16.PhaseQuotientLH), "gpu0", t0, tc.q)
			infos := pt.Infos()
			var got []groth16.Phase
			var sum time.Duration
			for _, i := range infos {
				got = append(got, i.Phase)
				sum += i.Duration
				assert.Equal(t, groth16.PhaseQuotientLH, i.Call, i.Phase)
				assert.Equal(t, 64, i.Points, i.Phase)
			}
			require.Equal(t, tc.want, got)
			want := tc.q
			want.Call = groth16.PhaseQuotientLH
			assert.Equal(t, want, infos[len(infos)-1].Detail)
			assert.Equal(t, []QuotientTimings{want}, log.quots)
			assert.Equal(t, tc.q.Compute+tc.q.Device+tc.q.Download, sum, "each part once")
			assert.Len(t, pt.Durations(), len(tc.want), "no phase for the record")
		})
	}
}

// A call with no trace in its context reports nothing, and does not fail.
func TestReportNoTrace(t *testing.T) {
	reportMSM(context.Background(), "gpu0", msmStarts{}, MSMTimings{})
	reportQuotient(context.Background(), "gpu0", time.Time{}, QuotientTimings{})
}

// A Prove on the GPU backend reports Prove's phases, and each backend
// call's sub-phases on the device under the call's phase; the GPU records
// name the MSM they are.
func TestProveTraceGPU(t *testing.T) {
	b, _, _ := chunkedBackend(t)
	f := newProvingFixture(t)
	ws := groth16.NewWorkspace(b)
	t.Cleanup(func() { require.NoError(t, ws.Close()) })
	ctx, pt, log := phaseLog()
	proof, err := groth16.Prove(ctx, f.pk, f.solve(), b, blinding(), groth16.WithWorkspace(ws))
	require.NoError(t, err)
	require.Equal(t, f.want, proofBytes(t, proof))

	calls := map[groth16.Phase]map[groth16.Phase]int{} // Call → sub-phase → count
	own := map[groth16.Phase]bool{}
	for _, i := range pt.Infos() {
		if i.Device == "" {
			assert.Empty(t, i.Call, "%s: a phase of Prove's", i.Phase)
			own[i.Phase] = true
			continue
		}
		assert.Equal(t, deviceName(b.dev.Info().Ordinal), i.Device)
		if calls[i.Call] == nil {
			calls[i.Call] = map[groth16.Phase]int{}
		}
		calls[i.Call][i.Phase]++
	}
	// The GPU backend is a ReadyPrefetcher with the fused call, so the A and
	// B compactions run beside it as their own phase.
	assert.Equal(t, map[groth16.Phase]bool{groth16.PhaseHost: true, groth16.PhaseCompact: true, groth16.PhaseQuotientLH: true,
		groth16.PhaseMSMA: true, groth16.PhaseMSMBPair: true, groth16.PhaseProve: true}, own)
	assert.Equal(t, 1, calls[groth16.PhaseQuotientLH][groth16.PhaseQuotientCompute], "the fused call's quotient")
	assert.Zero(t, calls[groth16.PhaseQuotientLH][groth16.PhaseQuotientDownload], "h stays on the GPU")
	for _, call := range []groth16.Phase{groth16.PhaseQuotientLH, groth16.PhaseMSMA, groth16.PhaseMSMB1, groth16.PhaseMSMB2} {
		for _, st := range []groth16.Phase{groth16.PhaseMSMUpload, groth16.PhaseMSMSort, groth16.PhaseMSMAccumulate,
			groth16.PhaseMSMReduce, groth16.PhaseMSMWindow} {
			assert.Equal(t, 1, calls[call][st], "%s: %s", call, st)
		}
	}
	var names []groth16.Phase
	for _, r := range log.take() {
		names = append(names, r.Call)
	}
	assert.ElementsMatch(t, []groth16.Phase{groth16.PhaseQuotientLH, groth16.PhaseMSMA, groth16.PhaseMSMB1,
		groth16.PhaseMSMB2}, names, "one GPU record per MSM")
	require.Len(t, log.quots, 1)
	assert.Equal(t, f.pk.DomainSize, log.quots[0].Points)
}

// Two Proves overlapping on one GPU backend, each with its own trace, each
// get only their own phases.
func TestProveTracesOverlapGPU(t *testing.T) {
	b, _, _ := chunkedBackend(t)
	f := newProvingFixture(t)
	type run struct {
		ctx context.Context
		pt  *groth16.PhaseTimes
		log *msmLog
		ws  *groth16.Workspace
	}
	runs := make([]run, 2)
	for i := range runs {
		ctx, pt, log := phaseLog()
		runs[i] = run{ctx, pt, log, groth16.NewWorkspace(b)}
		t.Cleanup(func() { require.NoError(t, runs[i].ws.Close()) })
	}
	for range 3 {
		errs := make(chan error, len(runs))
		for _, r := range runs {
			asg := f.solve()
			go func() {
				_, err := groth16.Prove(r.ctx, f.pk, asg, b, blinding(), groth16.WithWorkspace(r.ws))
				errs <- err
			}()
		}
		for range runs {
			require.NoError(t, <-errs)
		}
	}
	for i, r := range runs {
		d := map[groth16.Phase]int{}
		for _, info := range r.pt.Infos() {
			d[info.Phase]++
		}
		assert.Equal(t, 3, d[groth16.PhaseProve], "run %d: its own proofs", i)
		assert.Equal(t, 3, d[groth16.PhaseQuotientCompute], "run %d: one quotient per proof", i)
		assert.Equal(t, 3*4, d[groth16.PhaseMSMSort], "run %d: four MSMs per proof", i)
		assert.Len(t, r.log.take(), 3*4, "run %d: its GPU records", i)
	}
}

// A Prove cancelled from its trace inside a GPU call (when the fused
// call's quotient is done) stops at the MSM's next check, and the next
// Prove on the same backend and workspace gives the CPU proof.
func TestProveCancelledMidCallGPU(t *testing.T) {
	b, _, _ := chunkedBackend(t)
	f := newProvingFixture(t)
	ws := groth16.NewWorkspace(b)
	t.Cleanup(func() { require.NoError(t, ws.Close()) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sorts int
	ctx = groth16.WithTrace(ctx, &groth16.Trace{PhaseDone: func(i groth16.PhaseInfo) {
		switch i.Phase {
		case groth16.PhaseQuotientCompute:
			cancel()
		case groth16.PhaseMSMSort:
			sorts++
		}
	}})
	_, err := groth16.Prove(ctx, f.pk, f.solve(), b, blinding(), groth16.WithWorkspace(ws))
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "quotient and msm L‖H")
	assert.Zero(t, sorts, "no MSM ran after the cancel")
	assert.Zero(t, aheadCount(t, b), "the prefetch is dropped")
	proof, err := groth16.Prove(context.Background(), f.pk, f.solve(), b, blinding(), groth16.WithWorkspace(ws))
	require.NoError(t, err)
	assert.Equal(t, f.want, proofBytes(t, proof))
}
