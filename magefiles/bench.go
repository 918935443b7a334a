//go:build mage

package main

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/magefile/mage/mg"

	"github.com/cuzk-dev/cuzk/bench/buildbench"
	"github.com/cuzk-dev/cuzk/internal/environ"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// Bench targets measure cuzk's build against other tools.
type Bench mg.Namespace

// The variables the bench targets read.
const (
	envBenchArchs  = "CUZK_BENCH_ARCHS"  // bench:build's archs for the edit sequence
	envBenchParts  = "CUZK_BENCH_PARTS"  // bench:build's parts
	envBenchSizes  = "CUZK_BENCH_SIZES"  // bench:prover's sizes
	envBenchRuns   = "CUZK_BENCH_RUNS"   // bench:prover's timed proofs per side
	envBenchRounds = "CUZK_BENCH_ROUNDS" // bench:prover's alternations of the sides
)

var (
	_ = environ.Register(envBenchArchs, "bench:build's targets for the edit sequence, comma separated (default sm_90)")
	_ = environ.Register(envBenchParts, "bench:build's parts: sequence, remote (default both)")
	_ = environ.Register(envBenchSizes, "bench:prover's sizes, comma separated, 2^k or k (default 2^16,2^18,2^20)")
	_ = environ.Register(envBenchRuns, "bench:prover's timed proofs per side (default 3)")
	_ = environ.Register(envBenchRounds, "bench:prover's alternations of the two sides (default 1)")
)

// Build compares the kernel build engine with ninja on the committed tree (nvcc runs and wall time per scripted edit, no-op timings), then times fresh clones against a remote cache.
//
// CUZK_BENCH_ARCHS (comma separated, default sm_90) sets the sequence's
// archs; every arch multiplies the compile time. CUZK_BENCH_PARTS (default
// "sequence,remote") picks the parts: the remote part clones the committed
// tree, runs a private nginx, and builds with all pinned archs (a cold
// remote with nvcc, a warm one with nvcc hidden and again with empty Go
// caches, and no-op builds). Fails when a check misses.
func (Bench) Build(ctx context.Context) error {
	pins, err := toolchain.LoadEnv()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	parts := os.Getenv(envBenchParts)
	if parts == "" {
		parts = "sequence,remote"
	}
	tk := during("bench:build: measuring")
	defer tk.Stop()
	var res buildbench.Result
	if strings.Contains(parts, "sequence") {
		cfg := buildbench.Config{Log: log}
		if a := os.Getenv(envBenchArchs); a != "" {
			cfg.Archs = strings.Split(a, ",")
		}
		if res, err = buildbench.Measure(ctx, ".", pins, 5, cfg); err != nil {
			return err
		}
	}
	if strings.Contains(parts, "remote") {
		r, err := buildbench.MeasureRemote(ctx, ".", 5, true, log)
		if err != nil {
			return err
		}
		res.Remote = &r
	}
	if err := res.WriteTable(os.Stdout); err != nil {
		return err
	}
	return res.Err()
}
