package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

func TestBudgetKeepsAssignmentsForTheirKey(t *testing.T) {
	ctx := context.Background()
	b := newBudget(100, 0)
	got, err := b.acquireFor(ctx, "x", 40)
	require.NoError(t, err)
	assert.Nil(t, got, "nothing kept yet")
	asg := &r1cs.Assignment{}
	b.keep("x", asg, 40)
	assert.Equal(t, int64(40), b.inUse(), "a kept assignment stays counted")

	got, err = b.acquireFor(ctx, "x", 40)
	require.NoError(t, err)
	assert.Same(t, asg, got, "the next job of its key solves into it")
	assert.Equal(t, int64(40), b.inUse())

	b.keep("x", got, 40)
	got, err = b.acquireFor(ctx, "y", 70)
	require.NoError(t, err)
	assert.Nil(t, got)
	assert.Equal(t, int64(70), b.inUse(), "another key's job dropped x's kept vectors to fit")
	b.release(70)
	assert.Zero(t, b.inUse())
}

func TestBudgetWaitsForAKeptAssignment(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := newBudget(50, 0)
	_, err := b.acquireFor(ctx, "x", 40)
	require.NoError(t, err)
	asg := &r1cs.Assignment{}
	got := make(chan *r1cs.Assignment)
	go func() {
		a, err := b.acquireFor(ctx, "x", 40)
		assert.NoError(t, err)
		got <- a
	}()
	time.Sleep(20 * time.Millisecond) // the second job waits: 80 bytes don't fit in 50
	b.keep("x", asg, 40)
	assert.Same(t, asg, <-got, "the waiting job of the same key takes the vectors handed back")
	assert.Equal(t, int64(40), b.inUse())

	short, stop := context.WithTimeout(ctx, 20*time.Millisecond)
	defer stop()
	_, err = b.acquireFor(short, "x", 40)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "nothing kept and no room: it waits until its context ends")
}

func TestBudgetUnboundedKeepsAtMostKeptMax(t *testing.T) {
	ctx := context.Background()
	b := newBudget(0, 2)
	for range 3 {
		_, err := b.acquireFor(ctx, "x", 10)
		require.NoError(t, err)
	}
	for range 3 {
		b.keep("x", &r1cs.Assignment{}, 10)
	}
	assert.Equal(t, int64(20), b.inUse(), "two kept, the third freed")
	b.forget("x")
	assert.Zero(t, b.inUse())
	b.keep("x", nil, 0)
	assert.Zero(t, b.inUse())
}

func TestJobsSolveIntoTheVectorsOfEarlierJobs(t *testing.T) {
	c := porep(t, 1024)
	e := newEngine(t, Config{Synthesizers: 1}, newFake(t, "fake0"))
	for i := range 3 {
		r, err := wait(t, submit(t, e, c, uint64(i+1), Normal))
		require.NoError(t, err)
		assert.True(t, r.Verified, "job %d's proof, solved into reused vectors, verifies", i)
	}
	e.budget.mu.Lock()
	defer e.budget.mu.Unlock()
	assert.Equal(t, int64(2), e.budget.reused, "the second and third jobs reused the vectors of the one before")
}
