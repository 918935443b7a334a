package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
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
