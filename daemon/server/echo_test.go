package server

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/client"
)

// TestLongNamesAreNotEchoed: a circuit id, a parameter name or a job id of
// 4 to 32 MiB is InvalidArgument with a short message naming the field,
// never the value whole (which, at 32 MiB, broke the reply's headers: the
// caller saw Unavailable, which clients retry).
func TestLongNamesAreNotEchoed(t *testing.T) {
	ts := startServer(t, serverOpts{message: 64 << 20})
	c, err := client.Dial([]string{ts.addr}, client.Config{MaxMessage: 64 << 20})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx := ctxT(t)
	for _, size := range []int{4 << 20, 32 << 20} {
		long := strings.Repeat("x", size)
		calls := map[string]func() error{
			"circuit.id": func() error {
				_, err := c.SubmitProof(ctx, &pb.ProofRequest{Circuit: &pb.Circuit{Id: long}, Input: seed(1)})
				return err
			},
			"circuit.params": func() error {
				_, err := c.GetVerifyingKey(ctx, &pb.KeyRequest{Circuit: &pb.Circuit{Id: "porep-synth", Params: map[string]uint64{long: 1}}})
				return err
			},
			"job_id": func() error {
				_, err := c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: long})
				return err
			},
			"job_id ": func() error {
				_, err := c.CancelProof(ctx, &pb.CancelProofRequest{JobId: long})
				return err
			},
		}
		for field, call := range calls {
			err := call()
			require.Error(t, err, field)
			assert.Equal(t, codes.InvalidArgument, status.Code(err), "%s of %d bytes: %.200v", field, size, err)
			msg := status.Convert(err).Message()
			assert.Less(t, len(msg), 4096, "%s of %d bytes: the message stays short", field, size)
			assert.Contains(t, msg, strings.TrimSpace(field), "the message names the field")
		}
	}
}

func TestClipMessage(t *testing.T) {
	assert.Equal(t, "short", clipMessage("short"))
	long := strings.Repeat("é", 3000) // 2 bytes a rune: the cut falls inside none
	got := clipMessage(long)
	assert.LessOrEqual(t, len(got), maxMessageText+64)
	assert.True(t, strings.HasSuffix(got, "bytes clipped)"))
	assert.True(t, strings.HasPrefix(got, strings.Repeat("é", maxMessageText/2)))
}
