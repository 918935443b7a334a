package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cuzk-dev/cuzk/bench/gpubench"
	"github.com/cuzk-dev/cuzk/internal/cli"
	"github.com/cuzk-dev/cuzk/internal/stats"
	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

const proveSummary = `Proves porep-synth (a PoRep-shaped circuit) at -constraints on each -backend:
a development setup first (timed apart; cached in -keys as the binary key
encoding, so a second run loads it), then one warm-up proof and -runs timed
proofs per backend. Every proof is verified with the pairing check, and with
the same blinding r, s per run the GPU proof must equal the CPU proof byte for
byte. Phases are timed one at a time: synthesis (witness and a, b, c), the
quotient H (NTTs), each MSM (GPU: with its scalar upload and device time).
Without a GPU the gpu column says "no GPU" and the exit status is 3.
The development setup (fixed-base tables) grows linearly with the size:
about 7 s for the default 2^20 on a 16-core host; later runs load the cached
keys in seconds.`

// proveConfig holds the prove command's flags.
type proveConfig struct {
	target         int
	backends       []string
	runs           int
	keyDir         string
	seed, setupSed uint64
	pinned         bool // the GPU backend's workspace and synthesis vectors in pinned host memory
	hOnDevice      bool // the GPU backend's fused quotient and L‖H call
}

func proveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet(prog, "prove", "[flags]", proveSummary, stderr)
	size := fs.String("constraints", "2^20", "porep-synth size: target constraints, 2^k or an integer (2^10 … 2^27)")
	backends := fs.String("backend", "cpu,gpu", "backends to run, comma-separated: cpu, gpu")
	runs := fs.Int("runs", 3, "timed proofs per backend, after one warm-up proof")
	keys := fs.String("keys", devkeys.Dir(), "directory caching development keys (\"\": no cache)")
	seed := fs.Uint64("seed", 1, "seed of the circuit's witness and of each run's blinding r, s")
	setupSeed := fs.Uint64("setup-seed", 1, "seed of the development setup's trapdoor (part of the key file name)")
	pinned := fs.Bool("pinned", true, "gpu: Prove's workspace and synthesis's a, b, c and wires in the backend's pinned host memory (false: the Go heap, uploads staged)")
	hOnDevice := fs.Bool("h-on-device", true, "gpu: the quotient and the L‖H MSM in one call, h kept on the device (false: h through the host)")
	if code, stop := parseFlags(fs, args, stdout); stop {
		return code
	}
	cfg := proveConfig{runs: *runs, keyDir: *keys, seed: *seed, setupSed: *setupSeed, pinned: *pinned, hOnDevice: *hOnDevice}
	var err error
	if cfg.target, err = stats.ParseCount(*size); err != nil {
		fmt.Fprintf(stderr, "cuzk-bench prove: -constraints: %v\n", err)
		return exitUsage
	}
	if cfg.backends, err = parseBackends(*backends); err != nil || cfg.runs < 1 {
		fmt.Fprintf(stderr, "cuzk-bench prove: %v\n", errors.Join(err, checkRuns(cfg.runs)))
		return exitUsage
	}
	return exitFor(stderr, "prove", runProve(ctx, cfg, stdout))
}

func parseBackends(s string) ([]string, error) {
	var out []string
	for _, b := range strings.Split(s, ",") {
		b = strings.TrimSpace(b)
		switch {
		case b != "cpu" && b != "gpu":
			return nil, fmt.Errorf("-backend: unknown backend %q (want cpu, gpu)", b)
		case !slices.Contains(out, b):
			out = append(out, b)
		}
	}
	return out, nil
}

func checkRuns(n int) error {
	if n < 1 {
		return fmt.Errorf("-runs %d: want at least 1", n)
	}
	return nil
}

func runProve(ctx context.Context, cfg proveConfig, w io.Writer) error {
	c, err := porep.New(cfg.target, int64(cfg.seed))
	if err != nil {
		return fmt.Errorf("porep-synth: %w", err)
	}
	l := c.Layout
	fmt.Fprintf(w, "porep-synth %s: %d constraints, %d publics, domain %s (depth %d, %d challenges, %d labelled)\n",
		stats.FormatCount(cfg.target), l.Constraints(), l.Publics(), stats.FormatCount(r1cs.DomainSize(l.Constraints(), l.Publics())),
		l.Depth, l.Challenges, l.Labelled)
	pk, vk, info, err := gpubench.DevKeys(cfg.keyDir, c, cfg.setupSed)
	if err != nil {
		return err
	}
	printKeyInfo(w, info, pk)
	bc := gpubench.ProveConfig{Runs: cfg.runs, Seed: cfg.seed, Pinned: cfg.pinned, HOnDevice: cfg.hOnDevice}
	var results []*gpubench.BackendResult
	var gpuMissing error
	for _, name := range cfg.backends {
		res, err := gpubench.RunBackend(ctx, name, bc, c, info.Shape, pk, vk)
		if errors.Is(err, gpubench.ErrNoGPU) {
			gpuMissing = err
			res = &gpubench.BackendResult{Name: name, Unavailable: "no GPU"}
		} else if err != nil {
			return fmt.Errorf("%s backend: %w", name, err)
		}
		results = append(results, res)
	}
	proveTable(pk, results).Write(w)
	for _, r := range results {
		if r.Ran() {
			fmt.Fprintln(w, r.Witness)
			break
		}
	}
	return errors.Join(summarize(w, results), gpuMissing)
}
