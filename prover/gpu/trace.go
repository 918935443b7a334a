package gpu

import (
	"context"
	"fmt"
	"time"

	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// QuotientTimings are the host wall times of one quotient (QuotientH, or
// the quotient part of MSMQuotientLH), as the quotient's last sub-phase
// carries them in groth16.PhaseInfo.Detail.
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
	// AheadBytes are the bytes of a that were sent ahead beside the MSMs
	// before (Backend.PrefetchQuotient), all of it or its first part, and
	// so not uploaded by the quotient; 0 where it uploaded all of a.
	AheadBytes int64
	// Call is the groth16 phase of the call (groth16.ContextCall).
	Call groth16.Phase
}

// SentAheadBytes implements groth16.SentAhead: AheadBytes.
func (q QuotientTimings) SentAheadBytes() int64 { return q.AheadBytes }

// deviceName names device ordinal in phase reports.
func deviceName(ordinal int) string { return fmt.Sprintf("gpu%d", ordinal) }

// reportQuotient reports q to the groth16.Trace in ctx: compute (started
// at start), the device span and, when h came down, its download, with q
// as the Detail of the last of them.
func reportQuotient(ctx context.Context, device string, start time.Time, q QuotientTimings) {
	q.Call = groth16.ContextCall(ctx)
	infos := []groth16.PhaseInfo{{Phase: groth16.PhaseQuotientCompute, Start: start, Duration: q.Compute}}
	if q.Device > 0 {
		infos = append(infos, groth16.PhaseInfo{Phase: groth16.PhaseQuotientDevice, Start: start, Duration: q.Device})
	}
	if q.Download > 0 {
		infos = append(infos, groth16.PhaseInfo{Phase: groth16.PhaseQuotientDownload, Start: start.Add(q.Compute),
			Duration: q.Download})
	}
	report(ctx, device, q.Points, infos, q)
}

// msmStarts are the host times at which an MSM's host-timed parts began:
// the bases' upload (when it made them resident), the scalars' upload and
// the device pipeline (its stages follow one another from there).
type msmStarts struct{ bases, upload, pipeline time.Time }

// reportMSM reports rec to the groth16.Trace in ctx: each part as a
// sub-phase (the idle time before the first chunk and between chunks only
// for a chunked MSM), the
// device stages placed one after another from the pipeline's start, with
// rec as the Detail of the last (PhaseMSMWindow).
func reportMSM(ctx context.Context, device string, at msmStarts, rec MSMTimings) {
	rec.Call = groth16.ContextCall(ctx)
	var infos []groth16.PhaseInfo
	if rec.Bases > 0 {
		infos = append(infos, groth16.PhaseInfo{Phase: groth16.PhaseMSMBases, Start: at.bases, Duration: rec.Bases})
	}
	infos = append(infos, groth16.PhaseInfo{Phase: groth16.PhaseMSMUpload, Start: at.upload, Duration: rec.Upload})
	if rec.Chunks > 1 {
		infos = append(infos, groth16.PhaseInfo{Phase: groth16.PhaseMSMLead, Start: at.upload, Duration: rec.Lead},
			groth16.PhaseInfo{Phase: groth16.PhaseMSMIdle, Start: at.pipeline, Duration: rec.Idle})
	}
	start := at.pipeline
	for _, s := range []struct {
		ph groth16.Phase
		d  time.Duration
	}{{groth16.PhaseMSMSort, rec.Sort}, {groth16.PhaseMSMAccumulate, rec.Accumulate},
		{groth16.PhaseMSMReduce, rec.Reduce}, {groth16.PhaseMSMWindow, rec.Window}} {
		infos = append(infos, groth16.PhaseInfo{Phase: s.ph, Start: start, Duration: s.d})
		start = start.Add(s.d)
	}
	report(ctx, device, rec.Points, infos, rec)
}

// report sends the sub-phases of one piece of work, in order, to the
// groth16.Trace in ctx, with device and points on each and detail (the
// work's record) on the last: the record rides on a sub-phase that is
// reported anyway, so that no consumer summing durations per phase counts
// the work twice (groth16.PhaseInfo.Detail).
func report(ctx context.Context, device string, points int, infos []groth16.PhaseInfo, detail any) {
	if groth16.ContextTrace(ctx) == nil {
		return
	}
	infos[len(infos)-1].Detail = detail
	for _, i := range infos {
		i.Device, i.Points = device, points
		groth16.PhaseDone(ctx, i)
	}
}
