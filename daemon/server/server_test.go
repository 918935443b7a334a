package server

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/client"
	"github.com/cuzk-dev/cuzk/daemon/engine"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

func TestConcurrentJobsVerifyOverTCPAndUnix(t *testing.T) {
	for _, listen := range []string{"127.0.0.1:0", "unix:" + t.TempDir() + "/cuzk.sock"} {
		t.Run(strings.SplitN(listen, ":", 2)[0], func(t *testing.T) {
			ts := startServer(t, serverOpts{listen: listen, engine: engine.Config{Synthesizers: 2}})
			c := dial(t, "", ts.addr)
			rep, err := client.RunLoad(ctxT(t), c, client.Load{Circuit: resolved(t, porepCircuit(2048)), N: 6, Concurrency: 3, Seed: 10})
			require.NoError(t, err)
			require.Empty(t, rep.Failures)
			require.Len(t, rep.Proofs, 6)
			for _, p := range rep.Proofs {
				assert.True(t, p.Result.GetVerified())
				assert.Equal(t, "cpu", p.Result.GetDevice())
				assert.Len(t, p.Result.GetProofCompressed(), 192)
				assert.Positive(t, p.Result.GetTimings().GetSynthesisNs())
				assert.Positive(t, p.Result.GetTimings().GetSynthesisWorkers(), "the goroutines its solve ran on")
			}
		})
	}
}

func TestInvalidRequestsNameTheField(t *testing.T) {
	ts := startServer(t, serverOpts{})
	c := dial(t, "", ts.addr)
	ctx := ctxT(t)
	r := r1 // a max-size field element plus one: r itself, not canonical
	merkle := &pb.Circuit{Id: "poseidon-merkle", Params: map[string]uint64{"depth": 1}}
	good, err := resolved(t, merkle).Example(1)
	require.NoError(t, err)
	outOfField := append(append([]byte(nil), good[:8]...), r...)
	outOfField = append(outOfField, good[40:]...)
	cases := []struct {
		name string
		req  *pb.ProofRequest
		want string
	}{
		{"no circuit", &pb.ProofRequest{Input: seed(1)}, "circuit: missing"},
		{"unknown circuit", &pb.ProofRequest{Circuit: &pb.Circuit{Id: "nope"}, Input: seed(1)}, "circuit.id"},
		{"bad param", &pb.ProofRequest{Circuit: porepCircuit(7), Input: seed(1)}, "circuit.params.constraints"},
		{"unknown param", &pb.ProofRequest{Circuit: &pb.Circuit{Id: "porep-synth", Params: map[string]uint64{"constraints": 2048, "x": 1}}, Input: seed(1)}, "circuit.params.x"},
		{"short input", &pb.ProofRequest{Circuit: porepCircuit(2048), Input: []byte{1, 2}}, "input: 2 bytes"},
		{"out of field", &pb.ProofRequest{Circuit: merkle, Input: outOfField}, "leaf"},
		{"oversized", &pb.ProofRequest{Circuit: porepCircuit(2048), Input: make([]byte, 1<<20+1)}, "input: 1048577 bytes, above"},
		{"priority", &pb.ProofRequest{Circuit: porepCircuit(2048), Input: seed(1), Priority: 99}, "priority"},
		{"request id", &pb.ProofRequest{Circuit: porepCircuit(2048), Input: seed(1), RequestId: strings.Repeat("x", 300)}, "request_id"},
	}
	for _, tc := range cases {
		_, err := c.SubmitProof(ctx, tc.req)
		require.Error(t, err, tc.name)
		assert.Equal(t, codes.InvalidArgument, status.Code(err), "%s: %v", tc.name, err)
		assert.Contains(t, status.Convert(err).Message(), tc.want, tc.name)
	}
	// Beyond the transport's own limit gRPC refuses the message itself.
	_, err = c.SubmitProof(ctx, &pb.ProofRequest{Circuit: porepCircuit(2048), Input: make([]byte, 3<<20)})
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	// The daemon keeps serving.
	res, err := c.Prove(ctx, &pb.ProofRequest{Circuit: porepCircuit(1024), Input: seed(1)})
	require.NoError(t, err)
	assert.True(t, res.GetVerified())
}

// r1 is r (the scalar field's modulus), big-endian.
var r1 = []byte{0x73, 0xed, 0xa7, 0x53, 0x29, 0x9d, 0x7d, 0x48, 0x33, 0x39, 0xd8, 0x08, 0x09, 0xa1, 0xd8, 0x05,
	0x53, 0xbd, 0xa4, 0x02, 0xff, 0xfe, 0x5b, 0xfe, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01}

func TestTokenAuth(t *testing.T) {
	ts := startServer(t, serverOpts{token: "s3cret"})
	ctx := ctxT(t)
	req := &pb.ProofRequest{Circuit: porepCircuit(1024), Input: seed(1)}
	for _, tok := range []string{"", "wrong"} {
		_, err := dial(t, tok, ts.addr).Prove(ctx, req)
		assert.Equal(t, codes.Unauthenticated, status.Code(err), "token %q", tok)
		assert.NotContains(t, err.Error(), "s3cret", "the expected token is never echoed")
	}
	res, err := dial(t, "s3cret", ts.addr).Prove(ctx, req)
	require.NoError(t, err)
	assert.True(t, res.GetVerified())
	// Health stays open to probes without credentials.
	h, err := healthpb.NewHealthClient(dialConn(t, ts.addr)).Check(ctx, &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	assert.Equal(t, healthpb.HealthCheckResponse_SERVING, h.GetStatus())
}

func TestCancelQueuedAndRunningOverRPC(t *testing.T) {
	dev := newHookDevice(t, "cpu")
	var held atomic.Int32
	release := make(chan struct{})
	dev.before = func(ctx context.Context, _ *r1cs.Assignment) error {
		held.Add(1)
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	ts := startServer(t, serverOpts{devices: []engine.Device{dev}, engine: engine.Config{Synthesizers: 1, Handoff: 1}})
	c := dial(t, "", ts.addr)
	ctx := ctxT(t)
	sub := func(s uint64) string {
		r, err := c.SubmitProof(ctx, &pb.ProofRequest{Circuit: porepCircuit(1024), Input: seed(s)})
		require.NoError(t, err)
		return r.GetJobId()
	}
	running := sub(1)
	require.Eventually(t, func() bool { return held.Load() == 1 }, time.Minute, time.Millisecond)
	queued := []string{sub(2), sub(3), sub(4)}
	for _, id := range append([]string{queued[2], running}, queued[0]) {
		r, err := c.CancelProof(ctx, &pb.CancelProofRequest{JobId: id})
		require.NoError(t, err)
		_ = r
		_, err = c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: id})
		assert.Equal(t, codes.Canceled, status.Code(err), "job %s: %v", id, err)
	}
	close(release)
	res, err := c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: queued[1]})
	require.NoError(t, err)
	assert.True(t, res.GetVerified())
	_, err = c.CancelProof(ctx, &pb.CancelProofRequest{JobId: "nope"})
	assert.Equal(t, codes.NotFound, status.Code(err))
}

func TestQueueFullIsResourceExhausted(t *testing.T) {
	dev := newHookDevice(t, "cpu")
	release := make(chan struct{})
	dev.before = func(ctx context.Context, _ *r1cs.Assignment) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	defer close(release)
	ts := startServer(t, serverOpts{devices: []engine.Device{dev}, engine: engine.Config{Synthesizers: 1, Handoff: 1, QueueSize: 1}})
	c := dial(t, "", ts.addr)
	ctx := ctxT(t)
	// No proof ends before release: the queue, the synthesizer, the
	// hand-off and the device hold one job each, however fast the pipeline
	// takes them, so the fifth and sixth are refused at the latest.
	var codesSeen []codes.Code
	var first string
	for i := range 6 {
		sub, err := c.SubmitProof(ctx, &pb.ProofRequest{Circuit: porepCircuit(1024), Input: seed(uint64(i))})
		codesSeen = append(codesSeen, status.Code(err))
		if i == 0 {
			first = sub.GetJobId()
		}
	}
	assert.Contains(t, codesSeen, codes.ResourceExhausted, "codes: %v", codesSeen)
	assert.Equal(t, codes.OK, codesSeen[0])
	// The status names the job the device holds, as a list and as one.
	require.Eventually(t, func() bool {
		st, err := c.GetStatus(ctx, &pb.GetStatusRequest{})
		require.NoError(t, err)
		d := st.GetDevices()[0]
		return len(d.GetCurrentJobs()) == 1 && d.GetCurrentJobs()[0] == first && d.GetCurrentJob() == first
	}, time.Minute, 5*time.Millisecond, "device status while %s proves", first)
}

func TestIdempotentResubmissionOverRPC(t *testing.T) {
	ts := startServer(t, serverOpts{})
	c := dial(t, "", ts.addr)
	ctx := ctxT(t)
	req := &pb.ProofRequest{RequestId: "sector-7", Circuit: porepCircuit(1024), Input: seed(7)}
	a, err := c.SubmitProof(ctx, req)
	require.NoError(t, err)
	b, err := c.SubmitProof(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, a.GetJobId(), b.GetJobId())
	assert.True(t, b.GetExisting())
	res, err := c.Prove(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, a.GetJobId(), res.GetJobId())
	req.Input = seed(8)
	_, err = c.SubmitProof(ctx, req)
	assert.Equal(t, codes.AlreadyExists, status.Code(err))
}

func TestFailingJobBesideHealthyOnes(t *testing.T) {
	dev := newHookDevice(t, "cpu")
	var n atomic.Int32
	dev.before = func(context.Context, *r1cs.Assignment) error {
		if n.Add(1) == 2 {
			return errors.New("injected GPU fault: CUDA_ERROR_ILLEGAL_ADDRESS")
		}
		return nil
	}
	ts := startServer(t, serverOpts{devices: []engine.Device{dev}, engine: engine.Config{Synthesizers: 1}})
	c := dial(t, "", ts.addr)
	ctx := ctxT(t)
	var failed int
	for i := range 4 {
		res, err := c.Prove(ctx, &pb.ProofRequest{Circuit: porepCircuit(1024), Input: seed(uint64(i))})
		if err != nil {
			failed++
			assert.Equal(t, codes.Internal, status.Code(err))
			assert.Contains(t, status.Convert(err).Message(), "prove on cpu: injected GPU fault")
			continue
		}
		assert.True(t, res.GetVerified())
	}
	assert.Equal(t, 1, failed)
}

func TestPreloadEvictWhileProving(t *testing.T) {
	ts := startServer(t, serverOpts{engine: engine.Config{Synthesizers: 2}})
	c := dial(t, "", ts.addr)
	ctx := ctxT(t)
	circ := porepCircuit(2048)
	k, err := c.PreloadKey(ctx, &pb.KeyRequest{Circuit: circ})
	require.NoError(t, err)
	assert.Equal(t, pb.KeyTier_KEY_TIER_WARM, k.GetTier(), "a CPU daemon keeps keys warm")
	assert.True(t, k.GetDevelopment())
	assert.Positive(t, k.GetHostBytes())
	_, err = c.PreloadKey(ctx, &pb.KeyRequest{Circuit: circ, Tier: pb.KeyTier_KEY_TIER_HOT})
	assert.Equal(t, codes.FailedPrecondition, status.Code(err))

	done := make(chan *client.Report)
	go func() {
		rep, _ := client.RunLoad(ctx, c, client.Load{Circuit: resolved(t, circ), N: 6, Concurrency: 2, Seed: 50})
		done <- rep
	}()
	evicted := 0
	for evicted < 3 {
		k, err := c.EvictKey(ctx, &pb.EvictKeyRequest{Circuit: circ})
		require.NoError(t, err)
		if k.GetTier() == pb.KeyTier_KEY_TIER_COLD {
			evicted++
		}
		time.Sleep(20 * time.Millisecond)
	}
	rep := <-done
	require.NotNil(t, rep)
	assert.Empty(t, rep.Failures, "evictions never disturb jobs holding the key")
	assert.Len(t, rep.Proofs, 6)
	st, err := c.GetStatus(ctx, &pb.GetStatusRequest{})
	require.NoError(t, err)
	assert.Equal(t, "cpu", st.GetBackend())
}

func TestWatchProofStreamsEvents(t *testing.T) {
	ts := startServer(t, serverOpts{})
	c := dial(t, "", ts.addr)
	ctx := ctxT(t)
	sub, err := c.SubmitProof(ctx, &pb.ProofRequest{Circuit: porepCircuit(1024), Input: seed(3)})
	require.NoError(t, err)
	stream, err := c.WatchProof(ctx, &pb.WatchProofRequest{JobId: sub.GetJobId()})
	require.NoError(t, err)
	var kinds []pb.EventKind
	for {
		ev, err := stream.Recv()
		if err != nil {
			break
		}
		if len(kinds) == 0 || kinds[len(kinds)-1] != ev.GetKind() {
			kinds = append(kinds, ev.GetKind())
		}
	}
	// The key loads beside the synthesis: it is ready before or after the
	// solve, and before the proof's phases.
	key := slices.Index(kinds, pb.EventKind_EVENT_KIND_KEY_READY)
	require.GreaterOrEqual(t, key, 0, "a key-ready event: %v", kinds)
	assert.Less(t, key, slices.Index(kinds, pb.EventKind_EVENT_KIND_GPU_PHASE))
	assert.Equal(t, []pb.EventKind{pb.EventKind_EVENT_KIND_QUEUED,
		pb.EventKind_EVENT_KIND_SYNTHESIS_DONE, pb.EventKind_EVENT_KIND_PROVING, pb.EventKind_EVENT_KIND_GPU_PHASE,
		pb.EventKind_EVENT_KIND_DONE}, slices.Delete(slices.Clone(kinds), key, key+1))
}

func TestMetricsAndVerifyingKey(t *testing.T) {
	ts := startServer(t, serverOpts{})
	c := dial(t, "", ts.addr)
	ctx := ctxT(t)
	_, err := c.Prove(ctx, &pb.ProofRequest{Circuit: porepCircuit(1024), Input: seed(1)})
	require.NoError(t, err)
	m, err := c.GetMetrics(ctx, &pb.GetMetricsRequest{})
	require.NoError(t, err)
	assert.Contains(t, m.GetPrometheusText(), `cuzk_jobs_total{outcome="done"} 1`)
	assert.Contains(t, m.GetPrometheusText(), `cuzk_device_busy_ratio{device="cpu"}`)
	vk, err := c.GetVerifyingKey(ctx, &pb.KeyRequest{Circuit: porepCircuit(1024)})
	require.NoError(t, err)
	assert.NotEmpty(t, vk.GetBinary())
	assert.Contains(t, vk.GetSnarkjsJson(), `"protocol": "groth16"`)
}

func TestMultiPartitionOverRPC(t *testing.T) {
	ts := startServer(t, serverOpts{engine: engine.Config{Synthesizers: 2}})
	c := dial(t, "", ts.addr)
	rep, err := client.RunLoad(ctxT(t), c, client.Load{Circuit: resolved(t, porepCircuit(1024)), N: 2, Concurrency: 2,
		Seed: 70, Partitions: 3})
	require.NoError(t, err)
	require.Empty(t, rep.Failures)
	require.Len(t, rep.Proofs, 2)
	for _, p := range rep.Proofs {
		assert.Len(t, p.Result.GetPartitions(), 3)
		assert.Len(t, p.Result.GetProofsCompressed(), 3*192)
		assert.Empty(t, p.Result.GetProof(), "a multi-partition result carries its proofs per partition")
	}
	_, err = c.SubmitProof(ctxT(t), &pb.ProofRequest{Circuit: porepCircuit(1024), Input: seed(1), Partitions: 2})
	assert.Equal(t, codes.InvalidArgument, status.Code(err))
	assert.Contains(t, status.Convert(err).Message(), "2 partitions")
	_, err = c.SubmitProof(ctxT(t), &pb.ProofRequest{Circuit: porepCircuit(1024), Input: seed(1), Partitions: 65})
	assert.Equal(t, codes.InvalidArgument, status.Code(err))
	assert.Contains(t, status.Convert(err).Message(), "partitions: 65")
}

func TestStatusReportsDeviceMemoryHeld(t *testing.T) {
	ts := startServer(t, serverOpts{infos: map[string]DeviceInfo{"cpu": {Ordinal: 3, MemoryBytes: 1 << 30,
		Held: func() (int64, int64) { return 5 << 20, 7 << 20 }}}})
	c := dial(t, "", ts.addr)
	st, err := c.GetStatus(context.Background(), &pb.GetStatusRequest{})
	require.NoError(t, err)
	require.Len(t, st.GetDevices(), 1)
	d := st.GetDevices()[0]
	assert.Equal(t, int32(3), d.GetOrdinal())
	assert.Equal(t, int64(5<<20), d.GetMemoryHeldBytes())
	assert.Equal(t, int64(7<<20), d.GetMemoryPeakBytes())
}

// A job's timings reach the client whole: every duration, the phases, the
// solve's goroutines and the bytes sent ahead.
func TestTimingsOfCarriesEveryField(t *testing.T) {
	in := engine.Timings{Queue: 1, KeyLoad: 2, Synthesis: 3, Handoff: 4, Prove: 5, Verify: 6, Total: 7,
		Phases: map[string]time.Duration{"msm A": 8}, SynthesisWorkers: 9, SentAheadBytes: 4 << 30}
	out := timingsOf(in)
	assert.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7}, []int64{out.GetQueueNs(), out.GetKeyLoadNs(), out.GetSynthesisNs(),
		out.GetHandoffNs(), out.GetProveNs(), out.GetVerifyNs(), out.GetTotalNs()})
	assert.Equal(t, map[string]int64{"msm A": 8}, out.GetPhasesNs())
	assert.Equal(t, int32(9), out.GetSynthesisWorkers())
	assert.Equal(t, int64(4<<30), out.GetSentAheadBytes())
}
