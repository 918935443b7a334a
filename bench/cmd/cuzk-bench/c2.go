package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/cuzk-dev/cuzk/bench/loadbench"
	"github.com/cuzk-dev/cuzk/internal/cli"
	"github.com/cuzk-dev/cuzk/internal/stats"
)

// c2Cmd is the C2-sized benchmark: a daemon started here, its development
// key generated at start, then -proofs proofs of -partitions partitions of
// 2^-log constraints (bench/loadbench.RunC2).
func c2Cmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet(prog, "c2", "[flags]", "A C2-shaped run through a daemon started here: the development key made at start (on the GPU) and kept\n"+
		"in memory, a one-partition warm-up, one proof alone, then -proofs proofs of -partitions partitions of -circuit,\n"+
		"every partition verified by the client; wall per proof over all proofs (fill included) and in steady state\n"+
		"(between the first and the last completion), per-partition phases, device busy by CUDA events and by worker\n"+
		"wall, peak host RSS and peak device memory, against the targets.", stderr)
	circuit := fs.String("circuit", "porep-c2", "partition circuit: porep-c2 (PoRep C2's column densities) or porep-synth (earlier figures' shape)")
	logN := fs.Int("log", 27, "partition size: 2^log constraints")
	partitions := fs.Int("partitions", 10, "partitions per proof")
	proofs := fs.Int("proofs", 5, "proofs (5 or more give the 4 steady-state intervals the wall target needs)")
	inFlight := fs.Int("in-flight", 2, "proofs submitted at once")
	slots := fs.Int("slots", 3, "partitions whose vectors the host holds at once (the daemon's host job budget)")
	synth := fs.Int("synthesizers", 1, "partitions solved at once (the daemon's synthesizers)")
	synthWorkers := fs.Int("synthesis-workers", 0, "the daemon's synthesis_workers: goroutines of one synthesis (0: the daemon's default, cores / solves running, halved while the GPU streams the key)")
	backend := fs.String("backend", "auto", "auto, gpu or cpu")
	gpus := fs.String("gpus", "", "GPU ordinals the daemon uses, comma separated (default all)")
	keyDir := fs.String("key-dir", "", "key directory (default: the key is kept in memory only)")
	var gpuMemory stats.Bytes
	fs.Var(&gpuMemory, "gpu-memory", "the daemon's gpu_memory_limit, as in 24GiB: device memory the prover may hold (0: all the GPU has)")
	gpuBatch := fs.Int("gpu-batch", 0, "the daemon's gpu_batch: partitions of the key a GPU proves together where it streams bases (0: the daemon's default; 1: one at a time)")
	maxWall := fs.Duration("max-wall", 12*time.Second, "target: steady-state wall per proof (0: none)")
	maxFill := fs.Duration("max-fill-wall", 14*time.Second, "target: wall per proof over all proofs, fill included (0: none)")
	maxSingle := fs.Duration("max-single", 20*time.Second, "target: one proof's latency alone (0: none)")
	maxRSS := fs.Float64("max-rss-gib", 64, "target: peak host RSS in GiB (0: none)")
	maxKeyReady := fs.Duration("max-key-ready", 20*time.Second, "target: the key's preload from a raw key file in -key-dir (0: none)")
	minBusy := fs.Float64("min-busy", 0.95, "target: steady-state device busy ratio by CUDA events (0: none)")
	verbose := fs.Bool("v", false, "the daemon's log on stderr")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
	if code, stop := parseFlags(fs, args, stdout); stop {
		return code
	}
	if *logN < 10 || *logN > 27 {
		return exitFor(stderr, "c2", fmt.Errorf("-log %d: %s takes 10 … 27", *logN, *circuit))
	}
	ords, err := parseOrdinals(*gpus)
	if err != nil {
		return exitFor(stderr, "c2", err)
	}
	cfg := loadbench.C2Config{Circuit: *circuit, GPUs: ords, Constraints: 1 << *logN, MaxFillWall: *maxFill, MaxSingle: *maxSingle, Partitions: *partitions, Proofs: *proofs, InFlight: *inFlight, Slots: *slots, Synthesizers: *synth,
		SynthesisWorkers: *synthWorkers,
		Backend:          *backend, KeyDir: *keyDir, GPUMemory: int64(gpuMemory), GPUBatch: *gpuBatch, MaxProofWall: *maxWall, MaxRSS: int64(*maxRSS * (1 << 30)), MinBusy: *minBusy, MaxKeyReady: *maxKeyReady,
		Progress: func(done, total int) { fmt.Fprintf(stderr, "c2: proof %d/%d done\n", done, total) }}
	if *verbose {
		cfg.Log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	stop, err := startProfiles(*cpuProfile, "")
	if err != nil {
		return exitFor(stderr, "c2", err)
	}
	res, err := loadbench.RunC2(ctx, cfg)
	if perr := stop(); perr != nil {
		fmt.Fprintln(stderr, "cuzk-bench c2: profile:", perr)
	}
	if err != nil {
		return exitFor(stderr, "c2", err)
	}
	if err := res.Write(stdout, cfg); err != nil {
		return exitFor(stderr, "c2", err)
	}
	if !res.OK(cfg) {
		fmt.Fprintln(stderr, "cuzk-bench c2: a target missed or a proof failed")
		return exitFail
	}
	return exitOK
}
