// Command cuzk-proverbench compares cuzk's CPU Groth16 prover with gnark
// v0.14's on porep-synth and prints one table (see package bench/prover).
// Run it from the repository root, where bench/gnark is found.
//
// Usage:
//
//	cuzk-proverbench [-sizes 2^16,2^18,2^20] [-runs 3] [-rounds 1] [-procs N] [-keys dir] [-gnark bench/gnark]
//	cuzk-proverbench ours -target N ...   (one size of cuzk's side, JSON; used by the above)
//
// The exit status is 1 when a run fails or a target is missed.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/cuzk-dev/cuzk/bench/prover"
	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) > 1 && os.Args[1] == "ours" {
		os.Exit(proverbench.OursMain(ctx, os.Args[2:], os.Stdout, os.Stderr))
	}
	os.Exit(compare(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func compare(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cuzk-proverbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sizes := fs.String("sizes", "2^16,2^18,2^20", "porep-synth targets, comma-separated: 2^k, k, or a count. "+
		"A first run pays the development setup of both sides: 2^20 takes several minutes on 2 cores")
	runs := fs.Int("runs", 3, "timed proofs per side, size and round, after one warm-up")
	rounds := fs.Int("rounds", 1, "rounds per size, alternating the sides, samples pooled (evens out load from other work)")
	procs := fs.Int("procs", runtime.GOMAXPROCS(0), "GOMAXPROCS of both sides")
	keys := fs.String("keys", devkeys.Dir(), "key cache of both sides (\"\": none)")
	gnark := fs.String("gnark", "bench/gnark", "directory of the bench/gnark module")
	gnarkBin := fs.String("gnark-bin", "", "prebuilt bench/gnark program (default: build -gnark)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	sz, err := proverbench.ParseSizes(*sizes)
	if err != nil {
		fmt.Fprintf(stderr, "cuzk-proverbench: -sizes: %v\n", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	res, err := proverbench.Run(ctx, proverbench.Config{Sizes: sz, Runs: *runs, Rounds: *rounds, Procs: *procs,
		KeyDir: *keys, NoKeyCache: *keys == "", GnarkModule: *gnark, GnarkBinary: *gnarkBin, Log: log})
	if res != nil && len(res.Sizes) > 0 {
		if werr := res.WriteTable(stdout); werr != nil && err == nil {
			err = werr
		}
		if err == nil {
			err = res.Err()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "cuzk-proverbench: %s\n", strings.ReplaceAll(err.Error(), "\n", "\n  "))
		return 1
	}
	return 0
}
