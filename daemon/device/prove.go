package device

import (
	"context"
	"io"

	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// proveOn runs groth16.Prove on backend, with its host scratch in ws when
// given. The trace in ctx (groth16.WithTrace) receives every phase. It and
// proveBatchOn are the places the daemon calls the prover.
func proveOn(ctx context.Context, pk *groth16.ProvingKey, asg *r1cs.Assignment, backend groth16.Backend, rnd io.Reader, ws *groth16.Workspace) (*groth16.Proof, error) {
	var opts []groth16.ProveOption
	if ws != nil {
		opts = append(opts, groth16.WithWorkspace(ws))
	}
	return groth16.Prove(ctx, pk, asg, backend, rnd, opts...)
}

// proveBatchOn runs groth16.ProveBatch on backend: each proof's trace and
// cancellation in its BatchProof.Ctx.
func proveBatchOn(ctx context.Context, pk *groth16.ProvingKey, b groth16.Batch, backend groth16.Backend, rnd io.Reader) (
	[]*groth16.Proof, []error) {
	return groth16.ProveBatch(ctx, pk, b, backend, rnd)
}
