//go:build mage

package main

import (
	"os"

	"github.com/magefile/mage/sh"
)

// Prover compares cuzk's CPU prover with gnark v0.14's Groth16 on porep-synth (2^16, 2^18, 2^20): synthesis rate, prove phases, peak memory and cuzk/gnark ratios, PASS/MISS.
//
// CUZK_BENCH_SIZES (comma separated, 2^k or k; default 2^16,2^18,2^20),
// CUZK_BENCH_RUNS (timed proofs per side, default 3) and CUZK_BENCH_ROUNDS
// (alternations of the sides, samples pooled; use 3 on a shared machine)
// choose the work. Both sides run in this command with the same GOMAXPROCS. The first run pays
// both development setups (cached afterwards): 2^20 takes several minutes
// on 2 cores. Fails when a target is missed.
func (Bench) Prover() error {
	args := []string{"run", "./bench/cmd/cuzk-proverbench"}
	if s := os.Getenv(envBenchSizes); s != "" {
		args = append(args, "-sizes", s)
	}
	if r := os.Getenv(envBenchRuns); r != "" {
		args = append(args, "-runs", r)
	}
	if r := os.Getenv(envBenchRounds); r != "" {
		args = append(args, "-rounds", r)
	}
	tk := during("bench:prover: running (the first run pays both sides' development setup)")
	defer tk.Stop()
	return sh.RunV("go", args...)
}
