//go:build mage

package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/cuzk-dev/cuzk/bench/loadbench"
)

// Daemon measures the proving daemon over gRPC on the CPU backend: 8 porep-synth 2^16 proofs at concurrency 1 and 4, and its overhead per proof (target ≤ 5 ms), cross-checked against direct calls.
//
// On a GPU host run `cuzk-bench daemon` from `go run mage.go gpu` instead
// (the GPU stream of porep-synth 2^20 proofs). Fails when a target misses
// or a proof does not verify.
func (Bench) Daemon(ctx context.Context) error {
	cfg := loadbench.Config{Constraints: 1 << 16, N: 8, Concurrencies: []int{1, 4}, Backend: "cpu", Direct: true,
		MaxOverhead: 5 * time.Millisecond}
	tk := during("bench:daemon: development key, direct calls and the daemon's proofs")
	cfg.Progress = func(done, total int) {
		if done < total {
			tk.Set(fmt.Sprintf("bench:daemon: %d of %d proofs at this concurrency", done, total))
		} else {
			tk.Set(fmt.Sprintf("bench:daemon: %d proofs done at this concurrency; the next one, or the direct calls", total))
		}
	}
	res, err := loadbench.Run(ctx, cfg)
	tk.Stop()
	if err != nil {
		return err
	}
	if err := res.Write(os.Stdout, cfg); err != nil {
		return err
	}
	if !res.OK(cfg) {
		return fmt.Errorf("bench:daemon: a target missed or a proof failed")
	}
	return nil
}
