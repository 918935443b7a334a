package main

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/cuzk-dev/cuzk/bench/gpubench"
	"github.com/cuzk-dev/cuzk/internal/cli"
	"github.com/cuzk-dev/cuzk/internal/report"
	"github.com/cuzk-dev/cuzk/internal/stats"
)

const synthSummary = `Times synthesis alone (r1cs.Solve of porep-synth: the witness and the a, b, c
evaluations) on -workers goroutines and, with -sequential, on one, and checks
that both give the same vectors element by element. Each mode solves once
(not timed), then -runs times into the same vectors, as a prover's worker
does. Rates are constraints per second of the median wall time, per core
(workers, at most the cores there are) and per second of the process's CPU
time, which other work on the machine does not distort. Also prints the
witness's share of zero, one and other wire values. Needs no key and no GPU;
about 160 bytes of host memory per constraint, twice with -sequential.`

func synthCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet(prog, "synth", "[flags]", synthSummary, stderr)
	size := fs.String("constraints", "2^20", "porep-synth size: target constraints, 2^k or an integer (2^10 … 2^27)")
	runs := fs.Int("runs", 3, "timed solves per mode, after one warm-up solve")
	seed := fs.Int64("seed", 1, "seed of the circuit's witness")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "goroutines of the parallel solves (r1cs.WithWorkers), at least 2")
	sequential := fs.Bool("sequential", true, "also solve on one goroutine and compare")
	if code, stop := parseFlags(fs, args, stdout); stop {
		return code
	}
	target, err := stats.ParseCount(*size)
	if err == nil {
		err = checkRuns(*runs)
	}
	if err == nil && *workers < 2 {
		err = fmt.Errorf("-workers %d: want at least 2", *workers)
	}
	if err != nil {
		fmt.Fprintf(stderr, "cuzk-bench synth: %v\n", err)
		return exitUsage
	}
	cfg := gpubench.SynthConfig{Target: target, Seed: *seed, Runs: *runs, Workers: *workers, Sequential: *sequential}
	return exitFor(stderr, "synth", runSynth(ctx, cfg, stdout))
}

func runSynth(ctx context.Context, cfg gpubench.SynthConfig, w io.Writer) error {
	res, err := gpubench.SynthRate(ctx, cfg)
	if err != nil {
		return err
	}
	l := res.Layout
	fmt.Fprintf(w, "porep-synth %s: %d constraints (depth %d, %d challenges, %d labelled: %d segments); instance built in %v; %d cores\n",
		stats.FormatCount(cfg.Target), res.Constraints, l.Depth, l.Challenges, l.Labelled, l.Challenges+1,
		res.Build.Round(1e6), runtime.GOMAXPROCS(0))
	t := report.NewTable("synthesis", "workers", "median wall", "M constraints/s", "per core", "per CPU-second", "CPU/wall")
	row := func(name string, workers int, s gpubench.SynthSamples) {
		r := res.Constraints
		t.Add(name, fmt.Sprint(workers), s.Wall.Median().Round(1e5).String(),
			fmt.Sprintf("%.1f", s.Rate(r)/1e6), fmt.Sprintf("%.2f", s.Rate(r)/1e6/float64(min(workers, runtime.GOMAXPROCS(0)))),
			fmt.Sprintf("%.2f", s.CPURate(r)/1e6), fmt.Sprintf("%.2f", s.CPU.Median().Seconds()/s.Wall.Median().Seconds()))
	}
	if cfg.Sequential {
		row("sequential", 1, res.Sequential)
	}
	row("parallel", res.Workers, res.Parallel)
	if err := t.Write(w); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	fmt.Fprintln(w, res.Witness)
	if !cfg.Sequential {
		return nil
	}
	if !res.Identical {
		return fmt.Errorf("parallel synthesis differs from sequential synthesis")
	}
	fmt.Fprintln(w, "parallel = sequential: every vector equal, element by element")
	return nil
}
