//go:build mage

package main

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/magefile/mage/mg"

	"github.com/cuzk-dev/cuzk/bench/buildbench"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// Bench targets measure cuzk's build against other tools.
type Bench mg.Namespace

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
	parts := os.Getenv("CUZK_BENCH_PARTS")
	if parts == "" {
		parts = "sequence,remote"
	}
	tk := during("bench:build: measuring")
	defer tk.Stop()
	var res buildbench.Result
	if strings.Contains(parts, "sequence") {
		cfg := buildbench.Config{Log: log}
		if a := os.Getenv("CUZK_BENCH_ARCHS"); a != "" {
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
