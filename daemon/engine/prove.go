package engine

import (
	"context"
	"io"
	"time"

	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// proveOn runs groth16.Prove on backend, reporting its phases to the trace
// in ctx. It is the one place the engine calls the prover.
func proveOn(ctx context.Context, pk *groth16.ProvingKey, asg *r1cs.Assignment, backend groth16.Backend, rnd io.Reader, ws *groth16.Workspace) (*groth16.Proof, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var tm groth16.Timings
	opts := []groth16.ProveOption{groth16.WithTimings(&tm)}
	if ws != nil {
		opts = append(opts, groth16.WithWorkspace(ws))
	}
	proof, err := groth16.Prove(pk, asg, backend, rnd, opts...)
	if err != nil {
		return nil, err
	}
	if t := phaseHook(ctx); t != nil {
		for name, d := range map[string]time.Duration{"quotient": tm.Quotient, "msm A": tm.MSMA, "msm B1": tm.MSMB1,
			"msm B2": tm.MSMB2, "msm L‖H": tm.MSMLH} {
			if d > 0 {
				t(name, d)
			}
		}
	}
	return proof, ctx.Err()
}

type phaseKey struct{}

// withPhaseHook makes proveOn report phases to fn.
func withPhaseHook(ctx context.Context, fn func(phase string, d time.Duration)) context.Context {
	return context.WithValue(ctx, phaseKey{}, fn)
}

func phaseHook(ctx context.Context) func(string, time.Duration) {
	fn, _ := ctx.Value(phaseKey{}).(func(string, time.Duration))
	return fn
}
