package server

import (
	"bytes"
	"fmt"
	"io"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/engine"
	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

func stateOf(s engine.State) pb.JobState {
	switch s {
	case engine.Queued:
		return pb.JobState_JOB_STATE_QUEUED
	case engine.Synthesizing:
		return pb.JobState_JOB_STATE_SYNTHESIZING
	case engine.Ready:
		return pb.JobState_JOB_STATE_READY
	case engine.Proving:
		return pb.JobState_JOB_STATE_PROVING
	case engine.Done:
		return pb.JobState_JOB_STATE_DONE
	case engine.Failed:
		return pb.JobState_JOB_STATE_FAILED
	case engine.Cancelled:
		return pb.JobState_JOB_STATE_CANCELLED
	}
	return pb.JobState_JOB_STATE_UNSPECIFIED
}

var eventKinds = map[engine.EventKind]pb.EventKind{
	engine.EventQueued: pb.EventKind_EVENT_KIND_QUEUED, engine.EventKeyReady: pb.EventKind_EVENT_KIND_KEY_READY,
	engine.EventSynthesisDone: pb.EventKind_EVENT_KIND_SYNTHESIS_DONE, engine.EventProving: pb.EventKind_EVENT_KIND_PROVING,
	engine.EventPhase: pb.EventKind_EVENT_KIND_GPU_PHASE, engine.EventDone: pb.EventKind_EVENT_KIND_DONE,
	engine.EventFailed: pb.EventKind_EVENT_KIND_FAILED, engine.EventCancelled: pb.EventKind_EVENT_KIND_CANCELLED,
}

func eventOf(id string, ev engine.Event) *pb.ProofEvent {
	out := &pb.ProofEvent{JobId: id, Kind: eventKinds[ev.Kind], UnixNano: ev.Time.UnixNano(), Phase: ev.Phase,
		DurationNs: int64(ev.Duration), Device: ev.Device}
	if ev.Err != nil {
		out.Error = ev.Err.Error()
	}
	return out
}

// CompressedProof is A ‖ B ‖ C in the zcash compressed encoding (48 + 96 +
// 48 bytes), the layout bellperson verifiers read.
func CompressedProof(p *groth16.Proof) []byte {
	a, b, c := p.A.Bytes(), p.B.Bytes(), p.C.Bytes()
	out := make([]byte, 0, len(a)+len(b)+len(c))
	return append(append(append(out, a[:]...), b[:]...), c[:]...)
}

func resultOf(j *engine.Job, r *engine.Result) (*pb.ProofResult, error) {
	var proof bytes.Buffer
	if _, err := r.Proof.WriteTo(&proof); err != nil {
		return nil, fmt.Errorf("encode proof: %w", err)
	}
	out := &pb.ProofResult{JobId: j.ID, RequestId: j.Req.RequestID, State: pb.JobState_JOB_STATE_DONE,
		Proof: proof.Bytes(), ProofCompressed: CompressedProof(r.Proof), Device: r.Device, Verified: r.Verified}
	for i := range r.Public {
		b := r.Public[i].Bytes()
		out.PublicInputs = append(out.PublicInputs, b[:])
	}
	t := r.Timings
	out.Timings = &pb.Timings{QueueNs: int64(t.Queue), KeyLoadNs: int64(t.KeyLoad), SynthesisNs: int64(t.Synthesis),
		HandoffNs: int64(t.Handoff), ProveNs: int64(t.Prove), VerifyNs: int64(t.Verify), TotalNs: int64(t.Total),
		PhasesNs: map[string]int64{}}
	for p, d := range t.Phases {
		out.Timings.PhasesNs[p] = int64(d)
	}
	return out, nil
}

func keyInfoOf(k keys.Info) *pb.KeyInfo {
	tiers := map[keys.Tier]pb.KeyTier{keys.Cold: pb.KeyTier_KEY_TIER_COLD, keys.Warm: pb.KeyTier_KEY_TIER_WARM, keys.Hot: pb.KeyTier_KEY_TIER_HOT}
	out := &pb.KeyInfo{Key: k.Key, Tier: tiers[k.Tier], HostBytes: k.HostBytes, GpuBytes: k.GPUBytes, Refs: int32(k.Refs),
		LoadNs: int64(k.LoadTime), HotOn: k.HotOn, Development: k.Development}
	if !k.LastUsed.IsZero() {
		out.LastUsedUnixNano = k.LastUsed.UnixNano()
	}
	return out
}

func writeMetrics(w io.Writer, g prometheus.Gatherer) error {
	mfs, err := g.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	return nil
}
