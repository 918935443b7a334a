package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"

	"github.com/cuzk-dev/cuzk/bench/loadbench"
	"github.com/cuzk-dev/cuzk/internal/cli"
	"github.com/cuzk-dev/cuzk/internal/stats"
)

// daemonBenchCmd starts a daemon in this process and measures it over
// gRPC (bench/loadbench).
func daemonBenchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet(prog, "daemon", "[flags]", "Start a daemon here (unix socket) and drive it over gRPC: -n porep-synth proofs per concurrency,\nevery proof verified by the client; throughput, latency quantiles, busy ratio, phase means.", stderr)
	size := fs.String("constraints", "2^20", "porep-synth constraints")
	n := fs.Int("n", 64, "proofs per concurrency")
	partitions := fs.Int("partitions", 1, "partitions per proof (the C2 shape: 10)")
	concs := fs.String("c", "1,16", "concurrencies, comma separated")
	backend := fs.String("backend", "auto", "auto, gpu or cpu")
	gpus := fs.String("gpus", "", "GPU ordinals the daemon uses, comma separated (default all)")
	keyDir := fs.String("key-dir", "", "key directory (default: a temporary one)")
	synth := fs.Int("synthesizers", 0, "synthesis workers (0: one per core)")
	critical := fs.Int("critical", 32, "queue this many NORMAL jobs, then time a CRITICAL one (0: skip)")
	minRate := fs.Float64("min-rate", 0, "throughput target in proofs/s (0: none)")
	direct := fs.Bool("direct", false, "also measure the overhead against direct calls (CPU backend)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
	traceFile := fs.String("trace", "", "write a runtime execution trace of the run to this file")
	if code, stop := parseFlags(fs, args, stdout); stop {
		return code
	}
	c, err := stats.ParseCount(*size)
	if err != nil {
		return exitFor(stderr, "daemon", err)
	}
	ords, err := parseOrdinals(*gpus)
	if err != nil {
		return exitFor(stderr, "daemon", err)
	}
	cfg := loadbench.Config{Constraints: uint64(c), N: *n, Partitions: *partitions, Backend: *backend, GPUs: ords, KeyDir: *keyDir,
		Synthesizers: *synth, Critical: *critical, MinThroughput: *minRate, Direct: *direct}
	for _, f := range strings.Split(*concs, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return exitFor(stderr, "daemon", fmt.Errorf("-c: %q is not a positive integer", f))
		}
		cfg.Concurrencies = append(cfg.Concurrencies, v)
	}
	stop, err := startProfiles(*cpuProfile, *traceFile)
	if err != nil {
		return exitFor(stderr, "daemon", err)
	}
	res, err := loadbench.Run(ctx, cfg)
	if perr := stop(); perr != nil {
		fmt.Fprintln(stderr, "cuzk-bench daemon: profile:", perr)
	}
	if err != nil {
		return exitFor(stderr, "daemon", err)
	}
	if err := res.Write(stdout, cfg); err != nil {
		return exitFor(stderr, "daemon", err)
	}
	if !res.OK(cfg) {
		fmt.Fprintln(stderr, "cuzk-bench daemon: a target missed or a proof failed")
		return exitFail
	}
	return exitOK
}

// parseOrdinals reads -gpus: comma-separated GPU ordinals, "" for all.
func parseOrdinals(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 0 {
			return nil, fmt.Errorf("-gpus: %q is not a GPU ordinal", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// startProfiles starts a CPU profile and an execution trace into the named
// files ("" : none); the returned function stops them and closes the files.
func startProfiles(cpuPath, tracePath string) (func() error, error) {
	var stops []func() error
	if cpuPath != "" {
		f, err := os.Create(cpuPath)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, err
		}
		stops = append(stops, func() error { pprof.StopCPUProfile(); return f.Close() })
	}
	if tracePath != "" {
		f, err := os.Create(tracePath)
		if err != nil {
			return nil, err
		}
		if err := trace.Start(f); err != nil {
			f.Close()
			return nil, err
		}
		stops = append(stops, func() error { trace.Stop(); return f.Close() })
	}
	return func() error {
		var errs []error
		for _, s := range stops {
			errs = append(errs, s())
		}
		return errors.Join(errs...)
	}, nil
}
