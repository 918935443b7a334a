package client

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/cuzk-dev/cuzk/internal/stats"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestQuantileIsStats(t *testing.T) {
	ds := []time.Duration{40, 10, 30, 20, 50}
	for _, q := range []float64{0, .5, .9, .99, 1} {
		assert.Equal(t, stats.Quantile(ds, q), Quantile(ds, q), q)
	}
}

func TestRetryableOnlyForAGoneDaemon(t *testing.T) {
	assert.True(t, retryable(status.Error(codes.Unavailable, "draining")))
	assert.False(t, retryable(status.Error(codes.InvalidArgument, "input")))
	assert.False(t, retryable(status.Error(codes.Internal, "prove on gpu0")))
	assert.False(t, retryable(errors.New("plain")))
}
