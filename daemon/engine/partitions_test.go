package engine

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

func partitionInput(seeds ...uint64) []byte {
	var in []byte
	for _, s := range seeds {
		in = append(in, seedInput(s)...)
	}
	return in
}

// TestMultiPartitionJob proves a 4-partition job under a host budget of
// one partition at a time and checks each proof against its own instance.
func TestMultiPartitionJob(t *testing.T) {
	c := porep(t, 1024)
	one := int64(32 * (2048 + 3*2048)) // at least one 1024-constraint job, fewer than two
	e := newEngine(t, Config{Synthesizers: 2, HostBudget: one}, newFake(t, "fake0"), newFake(t, "fake1"))
	j, _, err := e.Submit(Request{Circuit: c, Input: partitionInput(11, 12, 13, 14), Partitions: 4})
	require.NoError(t, err)
	r, err := wait(t, j)
	require.NoError(t, err)
	require.Len(t, r.Partitions, 4)
	assert.True(t, r.Verified)
	for k, p := range r.Partitions {
		require.NotNil(t, p.Proof, "partition %d", k)
		assert.True(t, p.Verified)
		assert.Equal(t, publicOf(t, c, uint64(11+k)), p.Public[1].String(), "partition %d proves its own instance", k)
	}
	assert.Positive(t, r.Timings.Synthesis)
	assert.GreaterOrEqual(t, r.Timings.Prove, r.Partitions[0].Timings.Prove)
	parts := map[int]bool{}
	require.NoError(t, j.Watch(context.Background(), func(ev Event) error {
		if ev.Kind == EventSynthesisDone {
			parts[ev.Partition] = true
		}
		return nil
	}))
	assert.Len(t, parts, 4, "every partition's events reach the job")
	assert.Zero(t, e.budget.jobBytes(), "every partition gave back its reservation (vectors kept for reuse aside)")

	_, _, err = e.Submit(Request{Circuit: c, Input: partitionInput(1, 2), Partitions: 3})
	require.ErrorIs(t, err, registry.ErrInvalid)
	assert.Contains(t, err.Error(), "3 partitions")
}

func TestMultiPartitionFailureAndCancel(t *testing.T) {
	c := porep(t, 1024)
	d := newFake(t, "fake0")
	bad := publicOf(t, c, 22)
	var held atomic.Bool
	release := make(chan struct{})
	d.before = func(ctx context.Context, asg *r1cs.Assignment) error {
		switch asg.Public[2].String() {
		case bad:
			return errors.New("injected fault")
		case publicOf(t, c, 31):
			held.Store(true)
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	e := newEngine(t, Config{Synthesizers: 1}, d)
	j, _, err := e.Submit(Request{Circuit: c, Input: partitionInput(21, 22, 23), Partitions: 3})
	require.NoError(t, err)
	_, err = wait(t, j)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "partition 1:")
	assert.Contains(t, err.Error(), "injected fault")
	assert.Equal(t, Failed, j.State())

	k, _, err := e.Submit(Request{Circuit: c, Input: partitionInput(31, 32, 33, 34), Partitions: 4})
	require.NoError(t, err)
	require.Eventually(t, held.Load, time.Minute, time.Millisecond)
	_, err = e.Cancel(k.ID)
	require.NoError(t, err)
	_, err = wait(t, k)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, Cancelled, k.State())
	close(release)
	r, err := wait(t, submit(t, e, c, 40, Normal))
	require.NoError(t, err, "the engine goes on")
	assert.True(t, r.Verified)
	assert.Zero(t, e.budget.jobBytes(), "cancelled partitions gave back their memory: only vectors kept for reuse stay reserved")
	assert.Positive(t, e.budget.keptBytes(), "the last job's vectors are kept")
}
