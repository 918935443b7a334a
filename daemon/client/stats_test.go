package client

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestRetryableOnlyForAGoneDaemon(t *testing.T) {
	assert.True(t, retryable(status.Error(codes.Unavailable, "draining")))
	assert.False(t, retryable(status.Error(codes.InvalidArgument, "input")))
	for _, c := range []codes.Code{codes.AlreadyExists, codes.NotFound, codes.ResourceExhausted, codes.FailedPrecondition,
		codes.Canceled, codes.DeadlineExceeded, codes.Unauthenticated} {
		assert.False(t, retryable(status.Error(c, "x")), "%s is the request's own", c)
	}
	assert.False(t, retryable(status.Error(codes.Internal, "prove on gpu0")))
	assert.False(t, retryable(errors.New("plain")))
}
