package server

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/client"
	"github.com/cuzk-dev/cuzk/daemon/engine"
	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// TestRequestIDNamesOneRequest: the same request_id with any field that
// changes the result or the work is AlreadyExists naming that field; the
// same request again is the same job.
func TestRequestIDNamesOneRequest(t *testing.T) {
	ts := startServer(t, serverOpts{})
	c := dial(t, "", ts.addr)
	ctx := ctxT(t)
	base := &pb.ProofRequest{RequestId: "r", Circuit: porepCircuit(1024), Input: seed(7), SkipVerify: true,
		Priority: pb.Priority_PRIORITY_HIGH}
	first, err := c.SubmitProof(ctx, base)
	require.NoError(t, err)
	cases := []struct {
		field  string
		change func(r *pb.ProofRequest)
	}{
		{"circuit.id", func(r *pb.ProofRequest) {
			r.Circuit = &pb.Circuit{Id: "sha256", Params: map[string]uint64{"bytes": 8}}
		}},
		{"circuit.params", func(r *pb.ProofRequest) { r.Circuit = porepCircuit(2048) }},
		{"input", func(r *pb.ProofRequest) { r.Input = seed(8) }},
		{"partitions", func(r *pb.ProofRequest) { r.Partitions = 2; r.Input = append(seed(7), seed(7)...) }},
		{"skip_verify", func(r *pb.ProofRequest) { r.SkipVerify = false }},
		{"priority", func(r *pb.ProofRequest) { r.Priority = pb.Priority_PRIORITY_LOW }},
	}
	for _, tc := range cases {
		t.Run(tc.field, func(t *testing.T) {
			req := proto.Clone(base).(*pb.ProofRequest)
			tc.change(req)
			_, err := c.SubmitProof(ctx, req)
			require.Equal(t, codes.AlreadyExists, status.Code(err), "%v", err)
			assert.Contains(t, status.Convert(err).Message(), tc.field+" differs")
			_, err = c.Prove(ctx, req)
			assert.Equal(t, codes.AlreadyExists, status.Code(err), "Prove too: %v", err)
		})
	}
	again, err := c.SubmitProof(ctx, proto.Clone(base).(*pb.ProofRequest))
	require.NoError(t, err)
	assert.Equal(t, first.GetJobId(), again.GetJobId())
	assert.True(t, again.GetExisting())
	res, err := c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: first.GetJobId()})
	require.NoError(t, err)
	assert.False(t, res.GetVerified(), "skip_verify was asked")
	one := proto.Clone(base).(*pb.ProofRequest)
	one.Partitions = 1 // 0 and 1 are one partition
	_, err = c.SubmitProof(ctx, one)
	assert.NoError(t, err)
}

// TestFailedOrCancelledRequestIDRunsAgain: a request_id finds a queued,
// running or successful job, but a failed or cancelled one's id runs the
// request again (a new job), so a retry after the cause is fixed proves.
func TestFailedOrCancelledRequestIDRunsAgain(t *testing.T) {
	dev := newHookDevice(t, "cpu")
	var failNext atomic.Bool
	hold := make(chan struct{})
	var holding atomic.Bool
	dev.before = func(ctx context.Context, _ *r1cs.Assignment) error {
		if failNext.CompareAndSwap(true, false) {
			return errors.New("injected device fault")
		}
		if holding.Load() {
			select {
			case <-hold:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	ts := startServer(t, serverOpts{devices: []engine.Device{dev}})
	c := dial(t, "", ts.addr)
	ctx := ctxT(t)
	req := &pb.ProofRequest{RequestId: "fails-once", Circuit: porepCircuit(1024), Input: seed(3)}

	failNext.Store(true)
	first, err := c.SubmitProof(ctx, req)
	require.NoError(t, err)
	_, err = c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: first.GetJobId()})
	require.Error(t, err, "the injected fault fails the first job")
	again, err := c.SubmitProof(ctx, req)
	require.NoError(t, err)
	assert.False(t, again.GetExisting(), "a failed job's id runs the request again")
	assert.NotEqual(t, first.GetJobId(), again.GetJobId())
	res, err := c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: again.GetJobId()})
	require.NoError(t, err)
	assert.True(t, res.GetVerified())
	same, err := c.SubmitProof(ctx, req)
	require.NoError(t, err)
	assert.True(t, same.GetExisting(), "a successful job's id returns it")
	assert.Equal(t, again.GetJobId(), same.GetJobId())
	_, err = c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: first.GetJobId()})
	assert.Error(t, err, "the failed job is still readable by its job id")

	holding.Store(true)
	req2 := &pb.ProofRequest{RequestId: "cancelled", Circuit: porepCircuit(1024), Input: seed(4)}
	running, err := c.SubmitProof(ctx, req2)
	require.NoError(t, err)
	dup, err := c.SubmitProof(ctx, req2)
	require.NoError(t, err)
	assert.True(t, dup.GetExisting(), "a queued or running job's id returns it")
	_, err = c.CancelProof(ctx, &pb.CancelProofRequest{JobId: running.GetJobId()})
	require.NoError(t, err)
	_, err = c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: running.GetJobId()})
	require.Equal(t, codes.Canceled, status.Code(err), "%v", err)
	holding.Store(false)
	rerun, err := c.SubmitProof(ctx, req2)
	require.NoError(t, err)
	assert.False(t, rerun.GetExisting(), "a cancelled job's id runs the request again")
	_, err = c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: rerun.GetJobId()})
	require.NoError(t, err)
	close(hold)
}

// TestClientRetryOfAGoneKeyProves: a job that fails with Unavailable
// (keys.ErrKeyGone: its key left the GPU) is resubmitted by daemon/client's
// load with the same request_id, and the resubmission proves.
func TestClientRetryOfAGoneKeyProves(t *testing.T) {
	dev := newHookDevice(t, "cpu")
	var failed atomic.Int32
	dev.before = func(context.Context, *r1cs.Assignment) error {
		if failed.Add(1) == 1 {
			return fmt.Errorf("key left the device: %w", keys.ErrKeyGone)
		}
		return nil
	}
	ts := startServer(t, serverOpts{devices: []engine.Device{dev}})
	c := dial(t, "", ts.addr)
	rep, err := client.RunLoad(ctxT(t), c, client.Load{Circuit: resolved(t, porepCircuit(1024)), N: 1, RequestPrefix: "gone", Retries: 2})
	require.NoError(t, err)
	require.Empty(t, rep.Failures)
	require.Len(t, rep.Proofs, 1)
	assert.Equal(t, 2, rep.Proofs[0].Attempts, "one retry, with the same request_id, proved")
}
