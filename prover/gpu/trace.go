package gpu

import (
	"context"
	"fmt"
	"time"

	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// Trace is a set of hooks through which the GPU reports its own record of
// each MSM and quotient of a call, with more detail than groth16's phases
// (an MSM's window and table shape): install one with WithTrace in the
// context passed to the call (or to groth16.Prove). Any hook may be nil.
// Hooks run on the device's thread, inside the call: they must return
// quickly and must not call the Backend or the MSM engine.
//
// Independently of Trace, every call reports its sub-phases
// (groth16.PhaseQuotientCompute, groth16.PhaseMSMSort, …) to the
// groth16.Trace in its context.
type Trace struct {
	MSMDone      func(MSMTimings)
	QuotientDone func(QuotientTimings)
}

type traceKey struct{}

// WithTrace returns a context carrying t (a nil t leaves ctx as it is).
func WithTrace(ctx context.Context, t *Trace) context.Context {
	if t == nil {
		return ctx
	}
	return context.WithValue(ctx, traceKey{}, t)
}

func contextTrace(ctx context.Context) *Trace {
	t, _ := ctx.Value(traceKey{}).(*Trace)
	return t
}

// QuotientTimings are the host wall times of one quotient (QuotientH, or
// the quotient part of MSMQuotientLH).
type QuotientTimings struct {
	// Compute covers the uploads of a, b, c and the seven transforms, until
	// h is in device memory. In MSMQuotientLH it also covers queuing the
	// private wires' upload during the last transforms: for wires outside
	// pinned memory, their host copy through the staging chunks.
	Compute time.Duration
	// Device is the quotient's device span by CUDA events: from the start
	// of a's upload to the end of the last transform (host-side gaps before
	// the first upload and after the last transform excluded).
	Device time.Duration
	// Download is the copy of h to the host (0 when h stayed on the device).
	Download time.Duration
	// Points is the domain size.
	Points int
	// Call is the groth16 phase of the call (groth16.ContextCall).
	Call groth16.Phase
}

// deviceName names device ordinal in phase reports.
func deviceName(ordinal int) string { return fmt.Sprintf("gpu%d", ordinal) }

// reportQuotient sends q to the traces in ctx: compute (started at start)
// and, when h came down, its download.
func reportQuotient(ctx context.Context, device string, start time.Time, q QuotientTimings) {
	q.Call = groth16.ContextCall(ctx)
	groth16.PhaseDone(ctx, groth16.PhaseInfo{Phase: groth16.PhaseQuotientCompute, Start: start, Duration: q.Compute,
		Device: device, Points: q.Points})
	if q.Device > 0 {
		groth16.PhaseDone(ctx, groth16.PhaseInfo{Phase: groth16.PhaseQuotientDevice, Start: start, Duration: q.Device,
			Device: device, Points: q.Points})
	}
	if q.Download > 0 {
		groth16.PhaseDone(ctx, groth16.PhaseInfo{Phase: groth16.PhaseQuotientDownload, Start: start.Add(q.Compute),
			Duration: q.Download, Device: device, Points: q.Points})
	}
	if t := contextTrace(ctx); t != nil && t.QuotientDone != nil {
		t.QuotientDone(q)
	}
}

// msmStarts are the host times at which an MSM's host-timed parts began:
// the bases' upload (when it made them resident), the scalars' upload and
// the device pipeline (its stages follow one another from there).
type msmStarts struct{ bases, upload, pipeline time.Time }

// reportMSM sends rec to the traces in ctx: each part as a groth16 phase,
// the device stages placed one after another from the pipeline's start.
func reportMSM(ctx context.Context, device string, at msmStarts, rec MSMTimings) {
	rec.Call = groth16.ContextCall(ctx)
	info := func(ph groth16.Phase, start time.Time, d time.Duration) {
		groth16.PhaseDone(ctx, groth16.PhaseInfo{Phase: ph, Start: start, Duration: d, Device: device, Points: rec.Points})
	}
	if rec.Bases > 0 {
		info(groth16.PhaseMSMBases, at.bases, rec.Bases)
	}
	info(groth16.PhaseMSMUpload, at.upload, rec.Upload)
	start := at.pipeline
	for _, s := range []struct {
		ph groth16.Phase
		d  time.Duration
	}{{groth16.PhaseMSMSort, rec.Sort}, {groth16.PhaseMSMAccumulate, rec.Accumulate},
		{groth16.PhaseMSMReduce, rec.Reduce}, {groth16.PhaseMSMWindow, rec.Window}} {
		info(s.ph, start, s.d)
		start = start.Add(s.d)
	}
	if t := contextTrace(ctx); t != nil && t.MSMDone != nil {
		t.MSMDone(rec)
	}
}
