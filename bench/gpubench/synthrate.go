package gpubench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/bench/benchinput"
	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// SynthConfig configures SynthRate.
type SynthConfig struct {
	Target     int   // porep-synth size, porep.MinTarget … porep.MaxTarget
	Seed       int64 // of the instance
	Runs       int   // timed solves per mode, after one warm-up solve each
	Workers    int   // of the parallel solves (r1cs.WithWorkers), ≥ 2
	Sequential bool  // also solve with one worker, and check the results equal
}

// SynthResult is what SynthRate measured. CPU times are the process's user
// and system time during each solve (garbage collection included): on a
// machine shared with other work the wall time of a parallel solve grows,
// its CPU time much less.
type SynthResult struct {
	Layout      porep.Layout
	Constraints int
	Build       time.Duration // porep.New: the instance's tree, proofs and inputs
	Sequential  SynthSamples  // empty unless SynthConfig.Sequential
	Parallel    SynthSamples
	Workers     int
	// Identical reports that every parallel solve's vectors equal the
	// sequential solve's, element by element (false when not compared).
	Identical bool
	Witness   benchinput.WireShare // public and private wire values
}

// SynthSamples are one mode's solves: wall and CPU time per run.
type SynthSamples struct{ Wall, CPU Samples }

// Rate is constraints per second of the median wall time (0 without runs).
func (s SynthSamples) Rate(constraints int) float64 { return rate(constraints, s.Wall) }

// CPURate is constraints per second of the median CPU time.
func (s SynthSamples) CPURate(constraints int) float64 { return rate(constraints, s.CPU) }

func rate(n int, s Samples) float64 {
	if len(s) == 0 || s.Median() <= 0 {
		return 0
	}
	return float64(n) / s.Median().Seconds()
}

// SynthRate builds porep-synth at cfg.Target and times r1cs.Solve on
// cfg.Workers goroutines and, with cfg.Sequential, on one. Each mode solves
// once without a shape (its vectors grow; not timed), then cfg.Runs times
// into those vectors (r1cs.WithBuffers), as a prover's worker does. It keeps
// two assignments in memory with cfg.Sequential (about 2 × 160 bytes per
// constraint), one without. Not safe for concurrent use with other
// measurements: the CPU times are the whole process's.
func SynthRate(ctx context.Context, cfg SynthConfig) (*SynthResult, error) {
	if cfg.Runs < 1 || cfg.Workers < 2 {
		return nil, fmt.Errorf("synthesis rate: %d runs, %d workers; want ≥ 1 and ≥ 2", cfg.Runs, cfg.Workers)
	}
	start := time.Now()
	c, err := porep.New(cfg.Target, cfg.Seed)
	if err != nil {
		return nil, fmt.Errorf("synthesis rate: %w", err)
	}
	res := &SynthResult{Layout: c.Layout, Constraints: c.Layout.Constraints(), Build: time.Since(start), Workers: cfg.Workers}
	par, err := timeSolves(ctx, c, cfg.Workers, cfg.Runs, &res.Parallel)
	if err != nil {
		return nil, fmt.Errorf("synthesis rate, %d workers: %w", cfg.Workers, err)
	}
	res.Witness = benchinput.CountWires(par.Public, par.Private)
	if !cfg.Sequential {
		return res, nil
	}
	seq, err := timeSolves(ctx, c, 1, cfg.Runs, &res.Sequential)
	if err != nil {
		return nil, fmt.Errorf("synthesis rate, sequential: %w", err)
	}
	res.Identical = sameAssignment(par, seq)
	return res, nil
}

// timeSolves solves c once untimed, then runs times into the same vectors,
// recording each timed solve in out; it returns the last assignment.
func timeSolves(ctx context.Context, c *porep.Circuit, workers, runs int, out *SynthSamples) (*r1cs.Assignment, error) {
	asg, err := r1cs.Solve(c, r1cs.WithWorkers(workers))
	if err != nil {
		return nil, fmt.Errorf("warm-up solve: %w", err)
	}
	for i := range runs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cpu0, err := processCPU()
		if err != nil {
			return nil, err
		}
		start := time.Now()
		if asg, err = r1cs.Solve(c, r1cs.WithWorkers(workers), r1cs.WithBuffers(asg)); err != nil {
			return nil, fmt.Errorf("solve %d: %w", i, err)
		}
		wall := time.Since(start)
		cpu1, err := processCPU()
		if err != nil {
			return nil, err
		}
		out.Wall, out.CPU = append(out.Wall, wall), append(out.CPU, cpu1-cpu0)
	}
	return asg, nil
}

// sameAssignment compares two assignments element by element on all cores.
func sameAssignment(x, y *r1cs.Assignment) bool {
	if x.NbConstraints != y.NbConstraints {
		return false
	}
	pairs := [][2][]fr.Element{{x.Public, y.Public}, {x.Private, y.Private}, {x.A, y.A}, {x.B, y.B}, {x.C, y.C}}
	for _, p := range pairs {
		if len(p[0]) != len(p[1]) {
			return false
		}
		differ := make([]bool, 1024) // one flag per chunk, written by one worker each
		benchinput.ParallelFor(len(differ), func(_, lo, hi int) {
			for k := lo; k < hi; k++ {
				a, b := chunkOf(p[0], k, len(differ)), chunkOf(p[1], k, len(differ))
				differ[k] = !slices.Equal(a, b)
			}
		})
		if slices.Contains(differ, true) {
			return false
		}
	}
	return true
}

// chunkOf is the k-th of n near-equal chunks of v.
func chunkOf(v []fr.Element, k, n int) []fr.Element {
	return v[k*len(v)/n : (k+1)*len(v)/n]
}

// processCPU is the process's user and system time so far.
func processCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, errors.Join(errors.New("process cpu time"), err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
