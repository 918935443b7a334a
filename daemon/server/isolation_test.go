package server

import (
	"context"
	"testing"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/engine"
	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// isolationShape is large enough that its development setup runs for a
// good part of a second on two cores, so that a cancel lands inside it.
const isolationShape = 16485

// TestCancelledJobLeavesTheSharedKeyLoadToOthers is issue 28's first
// scenario: jobs A and B need the same cold key; A is cancelled while the
// key loads; B, which nobody cancelled, must get its proof.
func TestCancelledJobLeavesTheSharedKeyLoadToOthers(t *testing.T) {
	ts := startServer(t, serverOpts{engine: engine.Config{Synthesizers: 2}})
	c := dial(t, "", ts.addr)
	ctx := ctxT(t)
	circ := porepCircuit(isolationShape)
	key := resolved(t, circ).Key
	a, err := c.SubmitProof(ctx, &pb.ProofRequest{Circuit: circ, Input: seed(1)})
	require.NoError(t, err)
	b, err := c.SubmitProof(ctx, &pb.ProofRequest{Circuit: circ, Input: seed(2)})
	require.NoError(t, err)
	ja, err := ts.eng.Job(a.GetJobId())
	require.NoError(t, err)
	jb, err := ts.eng.Job(b.GetJobId())
	require.NoError(t, err)
	// Both jobs hold the one load (a reference each), which runs beside
	// their synthesis.
	require.Eventually(t, func() bool {
		return loading(ts.keys) && ts.keys.Get(key).Refs == 2 && !ja.State().Ended() && !jb.State().Ended()
	}, 30*time.Second, time.Millisecond, "both jobs wait for the key")
	_, err = c.CancelProof(ctx, &pb.CancelProofRequest{JobId: a.GetJobId()})
	require.NoError(t, err)
	require.Equal(t, keys.Cold, ts.keys.Get(key).Tier, "the key loaded before the cancel: the test shows nothing")
	_, err = c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: a.GetJobId()})
	assert.Equal(t, codes.Canceled, status.Code(err), "A: %v", err)
	res, err := c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: b.GetJobId()})
	require.NoError(t, err, "B was not cancelled")
	assert.True(t, res.GetVerified())
}

// TestShortDeadlinesOnKeyCallsLeaveAJobAlone is the scenario's second
// form: a client calling GetVerifyingKey or PreloadKey with a 10 ms
// deadline starts the key's load; job B, submitted at once, shares it and
// must still get its proof.
func TestShortDeadlinesOnKeyCallsLeaveAJobAlone(t *testing.T) {
	for _, call := range []string{"GetVerifyingKey", "PreloadKey"} {
		t.Run(call, func(t *testing.T) {
			// The key's setup waits for open, so the load outlasts the short
			// call however slowly the machine runs; the deadline need only
			// be long enough for the call to reach the server.
			open := make(chan struct{})
			ts := startServer(t, serverOpts{engine: engine.Config{Synthesizers: 1}, keys: keys.Config{FixedBase: gatedFixedBase{open}}})
			c := dial(t, "", ts.addr)
			ctx := ctxT(t)
			circ := porepCircuit(isolationShape)
			short := make(chan error, 1)
			go func() {
				sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				defer cancel()
				var err error
				if call == "GetVerifyingKey" {
					_, err = c.GetVerifyingKey(sctx, &pb.KeyRequest{Circuit: circ})
				} else {
					_, err = c.PreloadKey(sctx, &pb.KeyRequest{Circuit: circ})
				}
				short <- err
			}()
			require.Eventually(t, func() bool { return loading(ts.keys) }, 30*time.Second, 100*time.Microsecond,
				"the short call starts the key's load")
			b, err := c.SubmitProof(ctx, &pb.ProofRequest{Circuit: circ, Input: seed(3)})
			require.NoError(t, err)
			err = <-short
			assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "%s: %v", call, err)
			close(open)
			res, err := c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: b.GetJobId()})
			require.NoError(t, err, "B had no deadline")
			assert.True(t, res.GetVerified())
		})
	}
}

// gatedFixedBase is the CPU's FixedBaser held until open is closed (or the
// setup's context ends): a development setup through it lasts as long as a
// test needs.
type gatedFixedBase struct{ open chan struct{} }

func (g gatedFixedBase) wait(ctx context.Context) error {
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g gatedFixedBase) FixedBaseG1(ctx context.Context, base *bls12381.G1Affine, s []fr.Element) ([]bls12381.G1Affine, error) {
	if err := g.wait(ctx); err != nil {
		return nil, err
	}
	return groth16.CPUFixedBase{}.FixedBaseG1(ctx, base, s)
}

func (g gatedFixedBase) FixedBaseG2(ctx context.Context, base *bls12381.G2Affine, s []fr.Element) ([]bls12381.G2Affine, error) {
	if err := g.wait(ctx); err != nil {
		return nil, err
	}
	return groth16.CPUFixedBase{}.FixedBaseG2(ctx, base, s)
}

// loading reports whether m has begun loading a key (an entry that is not
// warm yet).
func loading(m *keys.Manager) bool {
	l := m.List()
	return len(l) == 1 && l[0].Tier == keys.Cold
}
