package groth16

import (
	"context"
	"sync"
	"time"
)

// Phase names a timed part of a proof: one of Prove's stages (each backend
// call it makes, and the whole proof) or a sub-phase that a backend reports
// from inside a call (a GPU's uploads, transforms, MSM pipeline stages and
// downloads).
type Phase string

// Prove's phases. Each is the wall time of one backend call as Prove sees
// it (or of Prove's own host work, or of Prove itself), reported with
// Device "".
const (
	PhaseHost       Phase = "host vectors"         // Prove's own host work before the backend calls: the wire vector, and its A and B compactions unless they overlap the fused call
	PhaseCompact    Phase = "host compactions"     // the A and B compactions when they run beside the fused quotient and L‖H call (ReadyPrefetcher): off the device's path
	PhaseQuotient   Phase = "quotient"             // Backend.QuotientH
	PhaseQuotientLH Phase = "quotient and msm L‖H" // QuotientLHBackend.MSMQuotientLH
	PhaseMSMA       Phase = "msm A"                // the G1 MSM over the A wires
	PhaseMSMB1      Phase = "msm B1"               // the G1 MSM over the B wires
	PhaseMSMB2      Phase = "msm B2"               // the G2 MSM over the B wires
	PhaseMSMBPair   Phase = "msm B pair"           // BPairBackend.MSMB: B1 and B2 in one call
	PhaseMSMLH      Phase = "msm L‖H"              // the G1 MSM over L‖H (two MSMs for a key with L and H apart)
	PhaseProve      Phase = "prove"                // the whole Prove call
)

// Backend sub-phases, reported from inside a call with the Device that ran
// them and, in PhaseInfo.Call, the Prove phase of that call. prover/gpu
// reports these, with its record of each MSM and quotient in
// PhaseInfo.Detail of the last sub-phase of that MSM or quotient.
const (
	// PhaseQuotientCompute is the upload of a, b, c and the seven
	// transforms, until h is in device memory.
	PhaseQuotientCompute Phase = "quotient compute"
	// PhaseQuotientDevice is the same quotient's device span by CUDA
	// events, from the start of a's upload to the end of the last
	// transform: the device's share of PhaseQuotientCompute.
	PhaseQuotientDevice Phase = "quotient device"
	// PhaseQuotientDownload is the copy of h to the host (absent when h
	// stays on the device).
	PhaseQuotientDownload Phase = "quotient download"
	// PhaseMSMUpload is the upload of an MSM's scalars (or the wait for an
	// upload started earlier).
	PhaseMSMUpload Phase = "msm upload"
	// PhaseMSMBases is the upload of an MSM's bases, with the build of their
	// table of multiples, when the MSM made them resident.
	PhaseMSMBases Phase = "msm bases upload"
	// PhaseMSMSort covers the digits, segment offsets and counting sort.
	PhaseMSMSort Phase = "msm sort"
	// PhaseMSMAccumulate is the additions of points into bucket partials.
	PhaseMSMAccumulate Phase = "msm accumulate"
	// PhaseMSMReduce folds partials until each bucket is one point.
	PhaseMSMReduce Phase = "msm reduce"
	// PhaseMSMWindow weights the buckets and sums each window.
	PhaseMSMWindow Phase = "msm window"
	// PhaseMSMLead is, for an MSM run in chunks, the device's idle time
	// before its first stage by CUDA events: from the end of the device's
	// work before it (a quotient, an MSM), while the first chunk's bases
	// and scalars went up and the host went from call to call; 0 where
	// nothing ran before it. Not device work; reported, as PhaseMSMIdle,
	// only for a chunked MSM.
	PhaseMSMLead Phase = "msm lead"
	// PhaseMSMIdle is, for an MSM run in chunks, the device's idle time
	// between its chunks by CUDA events: from the end of one chunk's
	// stages to the start of the next's, while the next chunk's scalars
	// or bases were not yet on the device. Not device work: it is spread
	// over the chunks, and reported (only for a chunked MSM) with the
	// pipeline's start as its Start.
	PhaseMSMIdle Phase = "msm idle"
)

// PhaseInfo describes one completed phase.
type PhaseInfo struct {
	Phase    Phase
	Start    time.Time     // when the phase began, by the host's clock
	Duration time.Duration // host wall time, or device time for device stages (CUDA events)
	Device   string        // the device that ran a backend sub-phase ("gpu0"); "" for host phases
	// Call is, for a backend sub-phase, the Prove phase of the call that
	// did the work (PhaseMSMA, PhaseQuotientLH, …; prover/gpu reports the
	// two MSMs of a B pair call as PhaseMSMB1 and PhaseMSMB2); "" for
	// Prove's own phases and outside Prove.
	Call Phase
	// Points is the size of the work: an MSM's points, a quotient's domain
	// size (0 where it does not apply).
	Points int
	// Batch is, for the phases of a call that did the work of several
	// proofs at once (ProveBatch), how many; each proof's trace then
	// receives the call's phases with Duration an equal share of the
	// call's. 0 for a proof's own work.
	Batch int
	// Detail is the backend's own record of the work that this sub-phase
	// ends, e.g. prover/gpu's MSMTimings (an MSM's stages with its window
	// and table shape) or QuotientTimings; nil for Prove's own phases and
	// for every other sub-phase. A backend sets it on the last sub-phase
	// it reports for that work (prover/gpu: an MSM's PhaseMSMWindow, a
	// quotient's last of compute, device and download), so that it
	// arrives once the work's sub-phases are all reported. It rides on
	// that existing record rather than on a phase of its own, so that
	// consumers summing Duration per phase (PhaseTimes.Durations, the
	// daemon's job timings) count every span once without knowing about
	// details, and a report with details has the same phases, durations
	// and Call values as one without. Consumers read it with a type
	// switch and must treat it as read-only: every trace of the call sees
	// the same value.
	Detail any
}

// SentAhead is implemented by a Detail that reports bytes of its work's
// input a backend had sent to its device before the call began (beside
// the work before it), so that the call did not upload them: prover/gpu's
// QuotientTimings, for a quotient's first vector sent beside the MSMs of
// the proof before.
type SentAhead interface {
	SentAheadBytes() int64
}

// Trace is a set of hooks that Prove and its backend call as phases
// complete, in the manner of net/http/httptrace: install one in a context
// with WithTrace and pass that context to Prove. Any hook may be nil. Hooks
// may be called concurrently (the MSMs of one proof overlap), from a
// backend's device thread (prover/gpu): they must return quickly and must
// not call the backend.
type Trace struct {
	// PhaseDone is called once per phase that completed without error.
	PhaseDone func(PhaseInfo)
}

type traceKey struct{}

// WithTrace returns a context carrying t: Prove calls and the backend
// calls made with it (or a context derived from it) report to t. As in
// net/http/httptrace, a trace already in ctx keeps receiving every phase:
// t's hook runs first, then the earlier one. A nil t leaves ctx as it is.
func WithTrace(ctx context.Context, t *Trace) context.Context {
	if t == nil {
		return ctx
	}
	if old := ContextTrace(ctx); old != nil && old.PhaseDone != nil {
		composed := *t
		if inner := t.PhaseDone; inner == nil {
			composed.PhaseDone = old.PhaseDone
		} else {
			composed.PhaseDone = func(info PhaseInfo) { inner(info); old.PhaseDone(info) }
		}
		t = &composed
	}
	return context.WithValue(ctx, traceKey{}, t)
}

// ContextTrace returns the Trace in ctx, or nil when there is none.
func ContextTrace(ctx context.Context) *Trace {
	t, _ := ctx.Value(traceKey{}).(*Trace)
	return t
}

type callKey struct{}

// WithCall returns a context marking the backend calls made with it as
// part of Prove phase p (Prove sets it on each call; a backend that splits
// a call, as a BPairBackend, may set it for each part).
func WithCall(ctx context.Context, p Phase) context.Context {
	return context.WithValue(ctx, callKey{}, p)
}

// ContextCall returns the Prove phase set by WithCall, or "".
func ContextCall(ctx context.Context) Phase {
	p, _ := ctx.Value(callKey{}).(Phase)
	return p
}

// PhaseDone reports info to the trace in ctx, if any, filling info.Call
// from ContextCall(ctx) when it is empty. Backends call it for their
// sub-phases, with their own record of a piece of work in info.Detail of
// its last sub-phase.
func PhaseDone(ctx context.Context, info PhaseInfo) {
	t := ContextTrace(ctx)
	if t == nil || t.PhaseDone == nil {
		return
	}
	if info.Call == "" {
		info.Call = ContextCall(ctx)
	}
	t.PhaseDone(info)
}

// PhaseTimes collects the phases of one or more proofs. It is safe for
// concurrent use: install its Trace in every call whose phases it should
// add up.
type PhaseTimes struct {
	mu    sync.Mutex
	infos []PhaseInfo
}

// Trace returns a Trace that records every completed phase in p.
func (p *PhaseTimes) Trace() *Trace {
	return &Trace{PhaseDone: func(info PhaseInfo) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.infos = append(p.infos, info)
	}}
}

// Durations returns the sum of the recorded durations per phase. Details
// (PhaseInfo.Detail) add no phase: they ride on a sub-phase counted once.
func (p *PhaseTimes) Durations() map[Phase]time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[Phase]time.Duration)
	for _, i := range p.infos {
		out[i.Phase] += i.Duration
	}
	return out
}

// Infos returns a copy of the recorded phases, in the order they completed.
func (p *PhaseTimes) Infos() []PhaseInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]PhaseInfo(nil), p.infos...)
}

// Reset forgets every recorded phase.
func (p *PhaseTimes) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.infos = nil
}
