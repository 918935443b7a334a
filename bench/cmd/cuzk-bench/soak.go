package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/cuzk-dev/cuzk/bench/loadbench"
	"github.com/cuzk-dev/cuzk/internal/cli"
)

// soakCmd runs the daemon soak (loadbench.Soak) and prints its table.
func soakCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet(prog, "soak", "[flags]", "Start a daemon here on the CPU backend and run -n small operations against it from -c clients:\n"+
		"proofs, cancels, client deadlines, key requests with short deadlines, preloads and evictions;\n"+
		"RSS, heap and goroutines per tenth, and once idle. Fails on an unexpected outcome or when\n"+
		"goroutines or RSS do not come back to their level.", stderr)
	n := fs.Int("n", 10000, "operations")
	conc := fs.Int("c", 8, "clients at once")
	seed := fs.Int64("seed", 0, "random seed (0: the time)")
	if code, stop := parseFlags(fs, args, stdout); stop {
		return code
	}
	if *seed == 0 {
		*seed = time.Now().UnixNano()
	}
	fmt.Fprintf(stderr, "soak: seed %d\n", *seed)
	res, err := loadbench.Soak(ctx, loadbench.SoakConfig{Jobs: *n, Concurrency: *conc, Seed: *seed}, nil)
	if res != nil {
		if werr := res.Write(stdout); werr != nil {
			return exitFor(stderr, "soak", werr)
		}
	}
	if err != nil {
		return exitFor(stderr, "soak", err)
	}
	if err := res.Level(20, 1.5); err != nil {
		return exitFor(stderr, "soak", err)
	}
	return exitOK
}
