package proverbench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// OursConfig is one size of cuzk's side of the benchmark.
type OursConfig struct {
	Target    int    // porep-synth target constraints (porep.New)
	Runs      int    // timed proofs after one warm-up proof
	KeyDir    string // key cache ("": setup every time)
	Export    string // where to write the circuit for the gnark side ("": nowhere)
	Seed      uint64 // witness seed and per-run blinding seed
	SetupSeed uint64 // development setup trapdoor seed
}

// OursReport is what cuzk's side measured for one size. Durations are in
// nanoseconds in JSON. Per run: Synthesis is r1cs.Solve (witness and a, b,
// c); the rest is groth16.Prove's own Timings: the three G1 MSMs (A, B1,
// L‖H) run at once, so their walls overlap, and the G2 MSM (B2) runs after
// them, alone; the MSM walls therefore do not add up to Prove.
type OursReport struct {
	Target      int             `json:"target"`
	Constraints int             `json:"constraints"`
	Public      int             `json:"public"`
	Private     int             `json:"private"`
	Domain      int             `json:"domain"`
	GOMAXPROCS  int             `json:"gomaxprocs"`
	SetupCached bool            `json:"setup_cached"`
	Setup       time.Duration   `json:"setup_ns"` // compile + setup + store, on a miss
	Synthesis   []time.Duration `json:"synthesis_ns"`
	Quotient    []time.Duration `json:"quotient_ns"`
	MSMA        []time.Duration `json:"msm_a_ns"`
	MSMB1       []time.Duration `json:"msm_b1_ns"`
	MSMB2       []time.Duration `json:"msm_b2_ns"`
	MSMLH       []time.Duration `json:"msm_lh_ns"`
	Prove       []time.Duration `json:"prove_ns"`
	Proofs      int             `json:"proofs"`
	Verified    int             `json:"verified"`
}

// MeasureOurs proves porep-synth at cfg.Target on the CPU backend: keys
// from the cache or a development setup, the circuit exported for the gnark
// side when asked, then one warm-up and cfg.Runs timed proofs, each
// verified. A proof that fails verification is an error. It uses
// GOMAXPROCS cores, as the prover does.
func MeasureOurs(ctx context.Context, cfg OursConfig) (*OursReport, error) {
	if cfg.Runs < 1 {
		return nil, fmt.Errorf("measure: %d runs, want at least 1", cfg.Runs)
	}
	c, err := porep.New(cfg.Target, int64(cfg.Seed))
	if err != nil {
		return nil, fmt.Errorf("porep-synth: %w", err)
	}
	l := c.Layout
	rep := &OursReport{
		Target: cfg.Target, Constraints: l.Constraints(), Public: l.Publics(),
		Domain: r1cs.DomainSize(l.Constraints(), l.Publics()), GOMAXPROCS: runtime.GOMAXPROCS(0),
	}
	sys, pk, vk, err := ourKeys(cfg, c, rep)
	if err != nil {
		return nil, err
	}
	rep.Private = pk.NbPrivate
	be, err := cpu.New()
	if err != nil {
		return nil, fmt.Errorf("cpu backend: %w", err)
	}
	for i := 0; i <= cfg.Runs; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := proveOnce(ctx, rep, i, c, sys, pk, vk, be, devkeys.Rand(cfg.Seed, uint64(i)+1)); err != nil {
			return nil, fmt.Errorf("run %d: %w", i, err)
		}
	}
	return rep, nil
}

// ourKeys compiles c (the key cache is keyed by the shape), returns the
// development keys from devkeys (the files cuzk-bench uses too), and writes
// the export when cfg.Export is set.
func ourKeys(cfg OursConfig, c *porep.Circuit, rep *OursReport) (*r1cs.System, *groth16.ProvingKey, *groth16.VerifyingKey, error) {
	start := time.Now()
	sys, err := r1cs.Compile(c)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("compile porep-synth: %w", err)
	}
	pk, vk, info, err := devkeys.Get(cfg.KeyDir, fmt.Sprintf("porep-synth-%d", cfg.Target), sys, cfg.SetupSeed)
	if err != nil {
		return nil, nil, nil, err
	}
	if !info.Cached {
		rep.Setup = time.Since(start)
	}
	rep.SetupCached = info.Cached
	if cfg.Export != "" {
		if err := exportFile(cfg.Export, c, sys); err != nil {
			return nil, nil, nil, err
		}
	}
	return sys, pk, vk, nil
}

func exportFile(path string, c *porep.Circuit, sys *r1cs.System) error {
	asg, err := r1cs.Solve(c, r1cs.WithShape(sys))
	if err != nil {
		return fmt.Errorf("export: synthesis: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	err = WriteCircuit(f, sys, asg)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("export: %w", cerr)
	}
	return err
}

// proveOnce synthesizes, proves and verifies one proof; run 0 is the
// warm-up, whose times are not kept.
func proveOnce(ctx context.Context, rep *OursReport, run int, c *porep.Circuit, sys *r1cs.System, pk *groth16.ProvingKey, vk *groth16.VerifyingKey,
	be groth16.Backend, rnd interface{ Read([]byte) (int, error) }) error {
	start := time.Now()
	// The shape is known, as in a prover's steady state; one worker, so
	// that the rate stays one core's (SynthesisRate).
	asg, err := r1cs.Solve(c, r1cs.WithShape(sys), r1cs.WithWorkers(1))
	if err != nil {
		return fmt.Errorf("synthesis: %w", err)
	}
	synth := time.Since(start)
	public := asg.PublicInputs()
	var pt groth16.PhaseTimes
	proof, err := groth16.Prove(groth16.WithTrace(ctx, pt.Trace()), pk, asg, be, rnd)
	if err != nil {
		return err
	}
	rep.Proofs++
	if err := groth16.Verify(vk, proof, public); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	rep.Verified++
	if run == 0 {
		return nil
	}
	d := pt.Durations()
	rep.Synthesis = append(rep.Synthesis, synth)
	rep.Quotient = append(rep.Quotient, d[groth16.PhaseQuotient])
	rep.MSMA, rep.MSMB1 = append(rep.MSMA, d[groth16.PhaseMSMA]), append(rep.MSMB1, d[groth16.PhaseMSMB1])
	rep.MSMB2, rep.MSMLH = append(rep.MSMB2, d[groth16.PhaseMSMB2]), append(rep.MSMLH, d[groth16.PhaseMSMLH])
	rep.Prove = append(rep.Prove, d[groth16.PhaseProve])
	return nil
}
