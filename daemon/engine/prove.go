package engine

import (
	"context"
	"io"

	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// proveOn runs groth16.Prove on backend, with its host scratch in ws when
// given. The trace in ctx (groth16.WithTrace) receives every phase. It is
// the one place the engine calls the prover.
func proveOn(ctx context.Context, pk *groth16.ProvingKey, asg *r1cs.Assignment, backend groth16.Backend, rnd io.Reader, ws *groth16.Workspace) (*groth16.Proof, error) {
	var opts []groth16.ProveOption
	if ws != nil {
		opts = append(opts, groth16.WithWorkspace(ws))
	}
	return groth16.Prove(ctx, pk, asg, backend, rnd, opts...)
}

// phaseName names a reported phase in a job's timings: Prove's own phases
// by their name, a backend's sub-phases under the call that did them
// ("msm A: msm sort").
func phaseName(info groth16.PhaseInfo) string {
	if info.Call == "" || info.Call == info.Phase {
		return string(info.Phase)
	}
	return string(info.Call) + ": " + string(info.Phase)
}
