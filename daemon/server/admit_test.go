package server

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/engine"
	"github.com/cuzk-dev/cuzk/daemon/keys"
)

// heapPeak samples the Go heap until stop is called and returns its
// highest value above the heap at the start.
func heapPeak(t *testing.T) (stop func() int64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := int64(ms.HeapAlloc)
	var peak atomic.Int64
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if d := int64(ms.HeapAlloc) - base; d > peak.Load() {
				peak.Store(d)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 { close(done); <-finished; return peak.Load() }
}

// TestEveryRPCIsAdmittedBeforeItAllocates is issue 28's second scenario:
// with both host budgets at 1 GiB, every RPC that can allocate is refused
// with ResourceExhausted naming the budget and the amounts, before any
// compile, setup, load or synthesis (the heap stays where it was).
func TestEveryRPCIsAdmittedBeforeItAllocates(t *testing.T) {
	ts := startServer(t, serverOpts{keys: keys.Config{HostBudget: 1 << 30},
		engine: engine.Config{HostBudget: 1 << 30, HostTotal: 2 << 30}})
	c := dial(t, "", ts.addr)
	ctx := ctxT(t)
	big := porepCircuit(1 << 27)
	sha := &pb.Circuit{Id: "sha256", Params: map[string]uint64{"bytes": 1 << 16}}
	shaIn, err := resolved(t, sha).Example(1)
	require.NoError(t, err)
	calls := []struct {
		name string
		call func() error
	}{
		{"GetVerifyingKey", func() error { _, err := c.GetVerifyingKey(ctx, &pb.KeyRequest{Circuit: big}); return err }},
		{"PreloadKey", func() error { _, err := c.PreloadKey(ctx, &pb.KeyRequest{Circuit: big}); return err }},
		{"SubmitProof", func() error {
			_, err := c.SubmitProof(ctx, &pb.ProofRequest{Circuit: big, Input: seed(1)})
			return err
		}},
		{"multi-partition", func() error {
			_, err := c.SubmitProof(ctx, &pb.ProofRequest{Circuit: big, Input: append(seed(1), seed(2)...), Partitions: 2})
			return err
		}},
		{"Prove sha256 64 KiB", func() error { _, err := c.Prove(ctx, &pb.ProofRequest{Circuit: sha, Input: shaIn}); return err }},
		{"GetVerifyingKey sha256 64 KiB", func() error { _, err := c.GetVerifyingKey(ctx, &pb.KeyRequest{Circuit: sha}); return err }},
	}
	for _, tc := range calls {
		stop := heapPeak(t)
		err := tc.call()
		grew := stop()
		require.Equal(t, codes.ResourceExhausted, status.Code(err), "%s: %v", tc.name, err)
		msg := status.Convert(err).Message()
		assert.Contains(t, msg, "budget", tc.name)
		assert.Contains(t, msg, "1073741824", "%s names the budget: %s", tc.name, msg)
		assert.Less(t, grew, int64(256<<20), "%s: the heap grew by %d bytes before the refusal", tc.name, grew)
	}
	assert.Empty(t, ts.keys.List(), "no key was loaded")
}

// TestHostTotalRefusesWhatTheSubBudgetsAdmit: a request whose key and
// vectors each fit their budgets but whose peak (the key beside its
// compile) exceeds the host budget is refused, naming the amounts; one that
// fits is proved.
func TestHostTotalRefusesWhatTheSubBudgetsAdmit(t *testing.T) {
	ts := startServer(t, serverOpts{keys: keys.Config{HostBudget: 1 << 30},
		engine: engine.Config{HostBudget: 1 << 30, HostTotal: 32 << 20}})
	c := dial(t, "", ts.addr)
	ctx := ctxT(t)
	_, err := c.PreloadKey(ctx, &pb.KeyRequest{Circuit: porepCircuit(1 << 16)})
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	assert.Contains(t, status.Convert(err).Message(), "the host budget is 33554432")
	assert.Contains(t, status.Convert(err).Message(), "key ")
	res, err := c.Prove(ctx, &pb.ProofRequest{Circuit: porepCircuit(1024), Input: seed(1)})
	require.NoError(t, err)
	assert.True(t, res.GetVerified())
}

// TestAdmissionWaitsForTheCountingPassOnItsOwnContext: a short deadline
// ends a caller's wait for a shape's counting pass without ending the pass.
func TestAdmissionWaitsForTheCountingPassOnItsOwnContext(t *testing.T) {
	ts := startServer(t, serverOpts{keys: keys.Config{HostBudget: 1 << 30}, engine: engine.Config{HostBudget: 1 << 30}})
	c := dial(t, "", ts.addr)
	sha := &pb.Circuit{Id: "sha256", Params: map[string]uint64{"bytes": 1 << 14}}
	short, cancel := context.WithTimeout(ctxT(t), time.Millisecond)
	defer cancel()
	_, err := c.GetVerifyingKey(short, &pb.KeyRequest{Circuit: sha})
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
	_, err = c.GetVerifyingKey(ctxT(t), &pb.KeyRequest{Circuit: sha})
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
}
