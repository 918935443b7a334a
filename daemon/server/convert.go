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
		DurationNs: int64(ev.Duration), Device: ev.Device, Partition: int32(ev.Partition)}
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
	out := &pb.ProofResult{JobId: j.ID, RequestId: j.Req.RequestID, State: pb.JobState_JOB_STATE_DONE,
		Device: r.Device, Verified: r.Verified, Timings: timingsOf(r.Timings)}
	if len(r.Partitions) == 0 {
		p, err := partitionOf(r)
		if err != nil {
			return nil, err
		}
		out.Proof, out.ProofCompressed, out.PublicInputs = p.Proof, p.ProofCompressed, p.PublicInputs
		return out, nil
	}
	for k, pr := range r.Partitions {
		p, err := partitionOf(pr)
		if err != nil {
			return nil, fmt.Errorf("partition %d: %w", k, err)
		}
		out.Partitions = append(out.Partitions, p)
		out.ProofsCompressed = append(out.ProofsCompressed, p.ProofCompressed...)
	}
	return out, nil
}

// partitionOf encodes one proof with its public inputs and timings.
func partitionOf(r *engine.Result) (*pb.PartitionResult, error) {
	var proof bytes.Buffer
	if _, err := r.Proof.WriteTo(&proof); err != nil {
		return nil, fmt.Errorf("encode proof: %w", err)
	}
	p := &pb.PartitionResult{Proof: proof.Bytes(), ProofCompressed: CompressedProof(r.Proof), Device: r.Device,
		Timings: timingsOf(r.Timings)}
	for i := range r.Public {
		b := r.Public[i].Bytes()
		p.PublicInputs = append(p.PublicInputs, b[:])
	}
	return p, nil
}

func timingsOf(t engine.Timings) *pb.Timings {
	out := &pb.Timings{QueueNs: int64(t.Queue), KeyLoadNs: int64(t.KeyLoad), SynthesisNs: int64(t.Synthesis),
		HandoffNs: int64(t.Handoff), ProveNs: int64(t.Prove), VerifyNs: int64(t.Verify), TotalNs: int64(t.Total),
		PhasesNs: map[string]int64{}, SynthesisWorkers: int32(t.SynthesisWorkers), SentAheadBytes: t.SentAheadBytes}
	for p, d := range t.Phases {
		out.PhasesNs[p] = int64(d)
	}
	return out
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
