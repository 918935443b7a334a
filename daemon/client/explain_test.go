package client

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestExplain(t *testing.T) {
	const addr = "127.0.0.1:9820"
	for _, tc := range []struct {
		err  error
		want []string
	}{
		{status.Error(codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:9820: connect: connection refused"`),
			[]string{"no daemon answers at 127.0.0.1:9820", "cuzk-daemon serve", "$CUZK_ADDR", "connection refused"}},
		{status.Error(codes.Unavailable, "engine: draining, not accepting jobs"), []string{"is stopping (draining)", "another daemon"}},
		{status.Error(codes.Unavailable, "error reading from server: EOF"), []string{"connection to the daemon at 127.0.0.1:9820 closed", "cuzk status"}},
		{status.Error(codes.Unauthenticated, "missing bearer token (authorization metadata)"), []string{"wants a bearer token", "$CUZK_DAEMON_TOKEN", "-token"}},
		{status.Error(codes.Unauthenticated, "invalid bearer token"), []string{"refused the token", "$CUZK_DAEMON_TOKEN"}},
		{status.Error(codes.DeadlineExceeded, "context deadline exceeded"), []string{"-timeout"}},
		{status.Error(codes.NotFound, "engine: unknown job"), []string{"does not know this job", "-addr"}},
		{status.Error(codes.ResourceExhausted, "grpc: received message larger than max (300 vs. 200)"), []string{"-max-message"}},
		{status.Error(codes.ResourceExhausted, "engine: queue full"), []string{"cuzk status"}},
		{status.Error(codes.InvalidArgument, "registry: sha256: bytes missing"), []string{"cuzk circuits"}},
	} {
		got := Explain(tc.err, addr)
		for _, w := range tc.want {
			assert.Contains(t, got.Error(), w, "%v", tc.err)
		}
		assert.Equal(t, status.Code(tc.err), status.Code(got), "the code survives")
		assert.ErrorIs(t, got, tc.err, "the error is wrapped")
		assert.Contains(t, got.Error(), "("+status.Code(tc.err).String()+": ", "the code and the daemon's words follow")
	}
	plain := errors.New("input: open x: no such file")
	assert.Equal(t, plain, Explain(plain, addr), "no gRPC status: as it is")
	assert.NoError(t, Explain(nil, addr))
	wrapped := fmt.Errorf("job-1: %w", status.Error(codes.NotFound, "engine: unknown job"))
	assert.Contains(t, Explain(wrapped, addr).Error(), "does not know this job", "a wrapped status too")
	internal := status.Error(codes.Internal, "boom")
	assert.Equal(t, internal, Explain(internal, addr), "nothing to add: as it is")
}
