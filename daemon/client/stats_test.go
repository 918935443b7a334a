package client

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestQuantileNearestRank(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	assert.Equal(t, 50*time.Millisecond, Quantile(ds, .5))
	assert.Equal(t, 90*time.Millisecond, Quantile(ds, .9))
	assert.Equal(t, 99*time.Millisecond, Quantile(ds, .99))
	assert.Equal(t, 100*time.Millisecond, Quantile(ds, 1))
	assert.Equal(t, 7*time.Millisecond, Quantile([]time.Duration{7 * time.Millisecond}, .99))
	assert.Zero(t, Quantile(nil, .5))
	assert.Equal(t, 100*time.Millisecond, ds[0], "the input is not reordered")
}

func TestRetryableOnlyForAGoneDaemon(t *testing.T) {
	assert.True(t, retryable(status.Error(codes.Unavailable, "draining")))
	assert.False(t, retryable(status.Error(codes.InvalidArgument, "input")))
	assert.False(t, retryable(status.Error(codes.Internal, "prove on gpu0")))
	assert.False(t, retryable(errors.New("plain")))
}
