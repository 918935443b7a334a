//go:build mage

package main

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/magefile/mage/mg"

	"github.com/cuzk-dev/cuzk/toolchain"
	"github.com/cuzk-dev/cuzk/toolchain/kbuild/buildbench"
)

// Bench targets measure cuzk's build against other tools.
type Bench mg.Namespace

// Build compares the kernel engine with ninja on the committed tree: nvcc runs and wall time per scripted edit, plus no-op timings.
//
// CUZK_BENCH_ARCHS (comma separated, default sm_90) sets the archs; every
// arch multiplies the compile time. Fails when a check misses.
func (Bench) Build(ctx context.Context) error {
	pins, err := toolchain.LoadEnv()
	if err != nil {
		return err
	}
	opts := []buildbench.Option{buildbench.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil)))}
	if a := os.Getenv("CUZK_BENCH_ARCHS"); a != "" {
		opts = append(opts, buildbench.WithArchs(strings.Split(a, ",")...))
	}
	res, err := buildbench.Measure(ctx, ".", pins, 5, opts...)
	if err != nil {
		return err
	}
	if err := res.WriteTable(os.Stdout); err != nil {
		return err
	}
	return res.Err()
}
