package server

import (
	"bytes"
	"context"
	"errors"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/engine"
	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
)

// Bounds on the names a caller sends, checked before any is used or
// echoed in an error: request_id, circuit.id, a parameter's name and
// job_id (the daemon's are 24 characters).
const (
	maxRequestID  = 256
	maxCircuitID  = 128
	maxParamName  = 128
	maxJobID      = 128
	maxParamCount = 64
)

// maxPartitions bounds a job's partitions (a PoRep C2 proof has 10).
const maxPartitions = 64

func (s *Server) resolve(c *pb.Circuit) (*registry.Resolved, error) {
	if c == nil {
		return nil, invalid("circuit: missing")
	}
	if len(c.GetId()) > maxCircuitID {
		return nil, invalid("circuit.id: %d bytes, at most %d", len(c.GetId()), maxCircuitID)
	}
	if len(c.GetParams()) > maxParamCount {
		return nil, invalid("circuit.params: %d parameters, at most %d", len(c.GetParams()), maxParamCount)
	}
	for name := range c.GetParams() {
		if len(name) > maxParamName {
			return nil, invalid("circuit.params: a name of %d bytes, at most %d", len(name), maxParamName)
		}
	}
	r, err := s.cfg.Registry.Resolve(c.GetId(), c.GetParams())
	if err != nil {
		return nil, statusOf(err)
	}
	return r, nil
}

func (s *Server) request(req *pb.ProofRequest) (engine.Request, error) {
	if len(req.GetRequestId()) > maxRequestID {
		return engine.Request{}, invalid("request_id: %d bytes, at most %d", len(req.GetRequestId()), maxRequestID)
	}
	if len(req.GetInput()) > s.cfg.MaxInputBytes {
		return engine.Request{}, invalid("input: %d bytes, above the %d-byte limit", len(req.GetInput()), s.cfg.MaxInputBytes)
	}
	p, err := priorityOf(req.GetPriority())
	if err != nil {
		return engine.Request{}, err
	}
	c, err := s.resolve(req.GetCircuit())
	if err != nil {
		return engine.Request{}, err
	}
	if req.GetPartitions() > maxPartitions {
		return engine.Request{}, invalid("partitions: %d, at most %d", req.GetPartitions(), maxPartitions)
	}
	return engine.Request{RequestID: req.GetRequestId(), Circuit: c, Input: req.GetInput(), Priority: p,
		SkipVerify: req.GetSkipVerify(), Partitions: int(req.GetPartitions())}, nil
}

// jobID checks a caller's job_id before it is looked up (and named in a
// NotFound).
func jobID(id string) error {
	if len(id) > maxJobID {
		return invalid("job_id: %d bytes, at most %d", len(id), maxJobID)
	}
	return nil
}

func priorityOf(p pb.Priority) (engine.Priority, error) {
	switch p {
	case pb.Priority_PRIORITY_UNSPECIFIED, pb.Priority_PRIORITY_NORMAL:
		return engine.Normal, nil
	case pb.Priority_PRIORITY_LOW:
		return engine.Low, nil
	case pb.Priority_PRIORITY_HIGH:
		return engine.High, nil
	case pb.Priority_PRIORITY_CRITICAL:
		return engine.Critical, nil
	}
	return 0, invalid("priority: unknown value %d", int32(p))
}

// SubmitProof implements cuzkv1.ProvingEngineServer.
func (s *Server) SubmitProof(ctx context.Context, req *pb.ProofRequest) (*pb.SubmitProofResponse, error) {
	r, err := s.request(req)
	if err != nil {
		return nil, err
	}
	j, existing, err := s.cfg.Engine.SubmitContext(ctx, r)
	if err != nil {
		return nil, statusOf(err)
	}
	return &pb.SubmitProofResponse{JobId: j.ID, State: stateOf(j.State()), Existing: existing}, nil
}

// AwaitProof implements cuzkv1.ProvingEngineServer.
func (s *Server) AwaitProof(ctx context.Context, req *pb.AwaitProofRequest) (*pb.ProofResult, error) {
	if err := jobID(req.GetJobId()); err != nil {
		return nil, err
	}
	j, err := s.cfg.Engine.Job(req.GetJobId())
	if err != nil {
		return nil, statusOf(err)
	}
	return s.await(ctx, j)
}

func (s *Server) await(ctx context.Context, j *engine.Job) (*pb.ProofResult, error) {
	r, err := j.Wait(ctx)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		return nil, statusOf(err)
	}
	return resultOf(j, r)
}

// Prove implements cuzkv1.ProvingEngineServer.
func (s *Server) Prove(ctx context.Context, req *pb.ProofRequest) (*pb.ProofResult, error) {
	r, err := s.request(req)
	if err != nil {
		return nil, err
	}
	j, _, err := s.cfg.Engine.SubmitContext(ctx, r)
	if err != nil {
		return nil, statusOf(err)
	}
	return s.await(ctx, j)
}

// CancelProof implements cuzkv1.ProvingEngineServer.
func (s *Server) CancelProof(_ context.Context, req *pb.CancelProofRequest) (*pb.CancelProofResponse, error) {
	if err := jobID(req.GetJobId()); err != nil {
		return nil, err
	}
	st, err := s.cfg.Engine.Cancel(req.GetJobId())
	if err != nil {
		return nil, statusOf(err)
	}
	return &pb.CancelProofResponse{State: stateOf(st)}, nil
}

// WatchProof implements cuzkv1.ProvingEngineServer.
func (s *Server) WatchProof(req *pb.WatchProofRequest, stream pb.ProvingEngine_WatchProofServer) error {
	if err := jobID(req.GetJobId()); err != nil {
		return err
	}
	j, err := s.cfg.Engine.Job(req.GetJobId())
	if err != nil {
		return statusOf(err)
	}
	err = j.Watch(stream.Context(), func(ev engine.Event) error {
		return stream.Send(eventOf(j.ID, ev))
	})
	if err != nil && stream.Context().Err() != nil {
		return status.FromContextError(stream.Context().Err()).Err()
	}
	return err
}

// GetMetrics implements cuzkv1.ProvingEngineServer.
func (s *Server) GetMetrics(context.Context, *pb.GetMetricsRequest) (*pb.GetMetricsResponse, error) {
	var b bytes.Buffer
	if err := writeMetrics(&b, s.cfg.Gatherer); err != nil {
		return nil, status.Errorf(codes.Internal, "metrics: %v", err)
	}
	return &pb.GetMetricsResponse{PrometheusText: b.String()}, nil
}

// PreloadKey implements cuzkv1.ProvingEngineServer.
func (s *Server) PreloadKey(ctx context.Context, req *pb.KeyRequest) (*pb.KeyInfo, error) {
	c, err := s.resolve(req.GetCircuit())
	if err != nil {
		return nil, err
	}
	hot := s.cfg.Backend == "gpu"
	switch req.GetTier() {
	case pb.KeyTier_KEY_TIER_WARM:
		hot = false
	case pb.KeyTier_KEY_TIER_HOT:
		if !hot {
			return nil, status.Errorf(codes.FailedPrecondition, "tier: HOT needs a GPU, this daemon proves on the %s", s.cfg.Backend)
		}
	case pb.KeyTier_KEY_TIER_UNSPECIFIED:
	default:
		return nil, invalid("tier: PreloadKey takes WARM or HOT, not %s", req.GetTier())
	}
	if err := s.cfg.Engine.Preload(ctx, c, hot); err != nil {
		return nil, statusOf(err)
	}
	return keyInfoOf(s.cfg.Keys.Get(c.Key)), nil
}

// EvictKey implements cuzkv1.ProvingEngineServer.
func (s *Server) EvictKey(_ context.Context, req *pb.EvictKeyRequest) (*pb.KeyInfo, error) {
	c, err := s.resolve(req.GetCircuit())
	if err != nil {
		return nil, err
	}
	tier := keys.Cold
	switch req.GetTier() {
	case pb.KeyTier_KEY_TIER_WARM:
		tier = keys.Warm
	case pb.KeyTier_KEY_TIER_COLD, pb.KeyTier_KEY_TIER_UNSPECIFIED:
	default:
		return nil, invalid("tier: EvictKey drops to WARM or COLD, not %s", req.GetTier())
	}
	info, err := s.cfg.Keys.EvictKey(c.Key, tier)
	if err != nil {
		return nil, status.Error(codes.FailedPrecondition, clipMessage(err.Error()))
	}
	return keyInfoOf(info), nil
}

// GetVerifyingKey implements cuzkv1.ProvingEngineServer.
func (s *Server) GetVerifyingKey(ctx context.Context, req *pb.KeyRequest) (*pb.GetVerifyingKeyResponse, error) {
	c, err := s.resolve(req.GetCircuit())
	if err != nil {
		return nil, err
	}
	if _, err := s.cfg.Engine.Admit(ctx, c, 0); err != nil {
		return nil, statusOf(err)
	}
	h, err := s.cfg.Keys.Acquire(ctx, c)
	if err != nil {
		return nil, statusOf(err)
	}
	defer h.Release()
	var bin bytes.Buffer
	if _, err := h.VK.WriteTo(&bin); err != nil {
		return nil, status.Errorf(codes.Internal, "verifying key: %v", err)
	}
	js, err := h.VK.MarshalSnarkJS()
	if err != nil {
		return nil, status.Errorf(codes.Internal, "verifying key: snarkjs: %v", err)
	}
	return &pb.GetVerifyingKeyResponse{Binary: bin.Bytes(), SnarkjsJson: string(js)}, nil
}

// GetStatus implements cuzkv1.ProvingEngineServer.
func (s *Server) GetStatus(context.Context, *pb.GetStatusRequest) (*pb.GetStatusResponse, error) {
	st := s.cfg.Engine.Status()
	out := &pb.GetStatusResponse{Version: s.cfg.Version, Backend: s.cfg.Backend, CpuReason: s.cfg.CPUWhy,
		Draining: st.Draining, UptimeNs: int64(time.Since(s.start))}
	for _, d := range st.Devices {
		info := s.cfg.Devices[d.Name]
		pd := &pb.Device{Name: d.Name, Ordinal: int32(info.Ordinal), MemoryBytes: info.MemoryBytes,
			BusyRatio: d.BusyRatio, JobsDone: d.JobsDone, CurrentJobs: d.Current}
		if len(d.Current) > 0 {
			pd.CurrentJob = d.Current[0]
		}
		if info.Held != nil {
			pd.MemoryHeldBytes, pd.MemoryPeakBytes = info.Held()
		}
		pd.MemoryLimitBytes = info.MemoryLimit
		for _, k := range d.Keys {
			pd.Keys = append(pd.Keys, &pb.DeviceKey{Key: k.Key, ResidentBytes: k.ResidentBytes, StreamedBytes: k.StreamedBytes,
				PeakBytes: k.PeakBytes, Plan: k.Plan})
		}
		out.Devices = append(out.Devices, pd)
	}
	out.Queue = &pb.QueueStatus{Critical: int32(st.Queued[engine.Critical]), High: int32(st.Queued[engine.High]),
		Normal: int32(st.Queued[engine.Normal]), Low: int32(st.Queued[engine.Low]), Capacity: int32(st.QueueSize),
		Synthesizing: int32(st.Synthesizing), Ready: int32(st.Ready), Proving: int32(st.Proving),
		HostBytesInFlight: st.HostInFlight, HostBudgetBytes: st.HostBudget}
	for _, k := range s.cfg.Keys.List() {
		out.Keys = append(out.Keys, keyInfoOf(k))
	}
	if s.cfg.Kernels != nil {
		out.Kernels, out.Pins = s.cfg.Kernels.Kernels, s.cfg.Kernels.Pins
	}
	return out, nil
}
