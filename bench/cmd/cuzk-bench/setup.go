package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"github.com/cuzk-dev/cuzk/bench/gpubench"
	"github.com/cuzk-dev/cuzk/internal/cli"
	"github.com/cuzk-dev/cuzk/internal/stats"
	"github.com/cuzk-dev/cuzk/prover/gpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

const keysSummary = `Times the development setup (groth16.SetupWith) of porep-synth at about
2^-log constraints, with the key points from the GPU's batched fixed-base
multiplication (-gpu) or the CPU's (prover/groth16 CPUFixedBase), and prints
the time split into the fixed-base G1 and G2 calls and the rest (trapdoor,
Lagrange basis at τ, column sums and the key scalars, all on the CPU). With
-check the CPU setup runs afterwards for the same seed and the two keys'
bytes must be equal (compared by SHA-256). The keys are not stored.`

func keysCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet(prog, "keys", "[flags]", keysSummary, stderr)
	logN := fs.Int("log", 20, "log2 of porep-synth's target constraints (4 … 27)")
	useGPU := fs.Bool("gpu", false, "fixed-base multiplications on GPU 0 (default: the CPU)")
	check := fs.Bool("check", false, "also run the CPU setup and require identical key bytes")
	seed := fs.Uint64("seed", 1, "seed of the setup's trapdoor (devkeys.Rand(seed, 0))")
	if code, stop := parseFlags(fs, args, stdout); stop {
		return code
	}
	if *logN < 4 || *logN > 27 {
		fmt.Fprintf(stderr, "cuzk-bench keys: -log %d: want 4 … 27\n", *logN)
		return exitUsage
	}
	cfg := gpubench.SetupConfig{Log: *logN, Seed: *seed, Check: *check}
	return exitFor(stderr, "keys", runKeys(ctx, cfg, *useGPU, stdout))
}

func runKeys(ctx context.Context, cfg gpubench.SetupConfig, useGPU bool, w io.Writer) error {
	var fb groth16.FixedBaser = groth16.CPUFixedBase{}
	name := "cpu"
	if useGPU {
		dev, err := gpubench.OpenGPU()
		if err != nil {
			return err
		}
		defer dev.Close() // nothing left to report after the results
		be, err := gpu.New(dev)
		if err != nil {
			return err
		}
		defer be.Close() // nothing left to report after the results
		fmt.Fprintln(w, dev.Info())
		fb, name = be, "gpu"
	}
	res, err := gpubench.RunSetup(ctx, cfg, fb)
	if err != nil {
		return err
	}
	printSetup(w, name, res)
	if res.Checked && !res.Same {
		return fmt.Errorf("%s setup keys differ from the CPU setup's", name)
	}
	return nil
}

func printSetup(w io.Writer, name string, r gpubench.SetupResult) {
	fmt.Fprintf(w, "porep-synth: %d constraints, domain %s, compile %s\n", r.Constraints, stats.FormatCount(r.Domain), stats.MsSig(r.Compile))
	fmt.Fprintf(w, "setup (%s fixed-base): %s\n", name, secs(r.Setup))
	fmt.Fprintf(w, "  fixed-base G1  %10s  %d points (%.3g M/s)\n", secs(r.G1), r.G1Points, rate(r.G1Points, r.G1))
	fmt.Fprintf(w, "  fixed-base G2  %10s  %d points (%.3g M/s)\n", secs(r.G2), r.G2Points, rate(r.G2Points, r.G2))
	fmt.Fprintf(w, "  rest (CPU)     %10s\n", secs(r.Rest))
	fmt.Fprintf(w, "keys: %s, sha256 %s (encoded and hashed in %s)\n", stats.FormatBytes(r.KeyBytes),
		hex.EncodeToString(r.KeySHA256[:8]), secs(r.Encode))
	if r.Checked {
		verdict := "SAME"
		if !r.Same {
			verdict = "DIFFERENT"
		}
		fmt.Fprintf(w, "check: CPU setup %s, sha256 %s: key bytes %s\n", secs(r.CPUSetup),
			hex.EncodeToString(r.CPUKeySHA256[:8]), verdict)
	}
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds() / 1e6
}
