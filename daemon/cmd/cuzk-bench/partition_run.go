package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/internal/report"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// partitionResult is what the partition runs measured. The warm-up run
// (which uploads the bases) is timed apart and its results are checked.
type partitionResult struct {
	warmup                time.Duration
	runs                  samples
	wall, upload, compute [numPhases]samples
	stage                 [numPhases][numStages]samples
	points, bits          [numPhases]int
	checks                [numPhases]string
}

// partitionOut holds one run's results.
type partitionOut struct {
	h  []fr.Element
	g1 [numPhases]bls12381.G1Jac
	g2 bls12381.G2Jac
}

func runPartitionWork(ctx context.Context, cfg partitionConfig, in *partitionInputs, gp *gpuProver, w io.Writer) (*partitionResult, error) {
	var probe quotientProbe
	if cfg.check {
		var err error
		if probe, err = newQuotientProbe(in.a, in.b, in.c, randomScalars(1, cfg.seed+6)[0]); err != nil {
			return nil, err
		}
	}
	sb := &serialBackend{inner: gp}
	be := sb.backend(cfg.hOnDevice)
	_, fused := be.(groth16.QuotientLHBackend)
	res := &partitionResult{}
	var rec phaseRecorder
	ctx = rec.context(ctx)
	for run := 0; run <= cfg.runs; run++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		start := time.Now()
		var fusedOut *partitionOut
		var err error
		if run == 0 && fused {
			// The fused call leaves a, b, c as they are: it runs first, on
			// the inputs the host path then checks, and must agree with it.
			if fusedOut, err = partitionOnce(ctx, be, in); err != nil {
				return res, fmt.Errorf("warm-up, h on the GPU: %w", err)
			}
		}
		runBe := be
		if run == 0 {
			runBe = sb.backend(false) // h through the host, so that it can be checked
		}
		out, err := partitionOnce(ctx, runBe, in)
		elapsed := time.Since(start)
		if err != nil {
			return res, fmt.Errorf("run %d: %w", run, err)
		}
		pt := rec.take()
		if run == 0 {
			res.warmup = elapsed
			fmt.Fprintf(w, "warm-up run (bases upload included): %s\n", ms(elapsed))
			if cfg.check {
				if err := checkPartition(in, out, fusedOut, probe, &res.checks); err != nil {
					return res, err
				}
			}
			continue
		}
		res.runs, res.points, res.bits = append(res.runs, elapsed), pt.points, pt.bits
		for ph := range numPhases {
			res.wall[ph] = append(res.wall[ph], pt.wall[ph])
			res.upload[ph] = append(res.upload[ph], pt.upload[ph])
			res.compute[ph] = append(res.compute[ph], pt.compute[ph])
			for i := range numStages {
				res.stage[ph][i] = append(res.stage[ph][i], pt.stage[ph][i])
			}
		}
	}
	return res, nil
}

// partitionOnce issues the partition's GPU work as groth16.Prove does for a
// key with L and H adjacent: the quotient (which overwrites a and returns h
// in its storage), the MSMs over the wires, then one MSM over L‖H with the
// scalars private wires ‖ h: h is copied behind the wires on the host
// between the calls, as Prove copies it into its buffer wires ‖ h. A
// QuotientLHBackend does the quotient and the L‖H MSM in one call instead
// (phase phQLH), h staying on the device, and a is left as it was; a
// BPairBackend does the MSMs over the B wires in G1 and G2 in one call. A
// fused groth16.Prefetcher is told the A and B wires and gets the fused call
// first, as Prove makes them.
func partitionOnce(ctx context.Context, be groth16.Backend, in *partitionInputs) (*partitionOut, error) {
	fb, fused := be.(groth16.QuotientLHBackend)
	bp, pair := be.(groth16.BPairBackend)
	jobs := partitionG1Jobs(in)
	if pf, ok := be.(groth16.Prefetcher); ok && fused {
		if err := pf.Prefetch(ctx, jobs[0].scalars, jobs[1].scalars); err != nil {
			return nil, fmt.Errorf("prefetch: %w", err)
		}
		jobs = []g1Job{jobs[2], jobs[0], jobs[1]}
	}
	out := &partitionOut{}
	if !fused {
		if err := replayCall(ctx, groth16.PhaseQuotient, len(in.a), func(ctx context.Context) (err error) {
			out.h, err = be.QuotientH(ctx, in.a, in.b, in.c)
			return err
		}); err != nil {
			return nil, fmt.Errorf("quotient: %w", err)
		}
	}
	for _, j := range jobs {
		switch {
		case j.ph == phB1 && pair:
			if err := replayCall(ctx, groth16.PhaseMSMBPair, len(j.bases), func(ctx context.Context) (err error) {
				out.g1[phB1], out.g2, err = bp.MSMB(ctx, j.bases, in.pk.G2.B, j.scalars)
				return err
			}); err != nil {
				return nil, fmt.Errorf("msm B G1 and G2: %w", err)
			}
			continue
		case j.ph == phL:
			if !pair {
				if err := replayCall(ctx, groth16.PhaseMSMB2, len(in.pk.G2.B), func(ctx context.Context) (err error) {
					out.g2, err = be.MSMG2(ctx, in.pk.G2.B, in.wire[:len(in.pk.G2.B)])
					return err
				}); err != nil {
					return nil, fmt.Errorf("msm B G2: %w", err)
				}
			}
			if fused {
				if err := replayCall(ctx, groth16.PhaseQuotientLH, len(in.lh), func(ctx context.Context) (err error) {
					out.g1[phQLH], err = fb.MSMQuotientLH(ctx, in.lh, in.wire[1:], in.a, in.b, in.c)
					return err
				}); err != nil {
					return nil, fmt.Errorf("quotient and msm L‖H: %w", err)
				}
				continue
			}
			copyParallel(in.buf[len(in.wire):], out.h[:in.pk.DomainSize-1])
		}
		if err := replayCall(ctx, jobPhase[j.ph], len(j.bases), func(ctx context.Context) (err error) {
			out.g1[j.ph], err = be.MSMG1(ctx, j.bases, j.scalars)
			return err
		}); err != nil {
			return nil, fmt.Errorf("msm %s: %w", phaseShort[j.ph], err)
		}
	}
	return out, nil
}

// jobPhase names the G1 jobs' calls as groth16.Prove does.
var jobPhase = map[phase]groth16.Phase{phA: groth16.PhaseMSMA, phB1: groth16.PhaseMSMB1, phL: groth16.PhaseMSMLH}

// replayCall makes one backend call f of phase ph over points as
// groth16.Prove does: with the phase in its context (groth16.WithCall),
// reported to the context's trace when it succeeds.
func replayCall(ctx context.Context, ph groth16.Phase, points int, f func(context.Context) error) error {
	start := time.Now()
	if err := f(groth16.WithCall(ctx, ph)); err != nil {
		return err
	}
	groth16.PhaseDone(ctx, groth16.PhaseInfo{Phase: ph, Start: start, Duration: time.Since(start), Points: points})
	return nil
}

// copyParallel copies src into dst on all cores, as groth16.Prove copies h.
// Copied on one core (then 8.5 GB at 2^27), the partition's total ran about
// 1.5 s above the sum of its GPU calls (docs/perf.md).
func copyParallel(dst, src []fr.Element) {
	parallelFor(len(src), func(_, lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
}

// g1Job is one G1 MSM of a partition.
type g1Job struct {
	ph      phase
	bases   []bls12381.G1Affine
	scalars []fr.Element
}

func partitionG1Jobs(in *partitionInputs) []g1Job {
	pk := in.pk
	return []g1Job{
		{phA, pk.G1.A, in.wire},
		{phB1, pk.G1.B, in.wire[:len(pk.G1.B)]},
		{phL, in.lh, in.buf[1:]},
	}
}

// checkPartition compares the warm-up results with gnark-crypto (MSMs on
// scalars folded to the tile) and the quotient with the probe, and the
// fused run's MSMs (fused, nil if none ran) with the host path's. It runs
// before the next run overwrites h and the L‖H scalars.
func checkPartition(in *partitionInputs, out, fused *partitionOut, probe quotientProbe, checks *[numPhases]string) error {
	var errs []error
	checks[phQuotient] = "ok: h(ζ)·Z(ζ) = a(ζ)·b(ζ) − c(ζ)"
	if err := probe.check(out.h); err != nil {
		checks[phQuotient], errs = "MISMATCH", append(errs, fmt.Errorf("quotient: %w", err))
	}
	if fused != nil {
		checks[phQLH] = "ok: equals the host path's L‖H"
		if !fused.g1[phQLH].Equal(&out.g1[phL]) {
			checks[phQLH], errs = "MISMATCH", append(errs, fmt.Errorf("quotient and msm L‖H: %w: differs from the host path", errMismatch))
		}
	}
	for _, j := range partitionG1Jobs(in) {
		want, how, err := refG1(in.g1Tile, j.bases, j.scalars, false)
		checks[j.ph] = "ok: " + how
		if err == nil && !want.Equal(&out.g1[j.ph]) {
			err = fmt.Errorf("%w: %s", errMismatch, how)
		}
		if err != nil {
			checks[j.ph], errs = "MISMATCH", append(errs, fmt.Errorf("msm %s: %w", phaseShort[j.ph], err))
		}
	}
	b2 := in.pk.G2.B
	want, how, err := refG2(in.g2Tile, b2, in.wire[:len(b2)], false)
	checks[phB2] = "ok: " + how
	if err == nil && !want.Equal(&out.g2) {
		err = fmt.Errorf("%w: %s", errMismatch, how)
	}
	if err != nil {
		checks[phB2], errs = "MISMATCH", append(errs, fmt.Errorf("msm B G2: %w", err))
	}
	if fused != nil { // its A and B MSMs took their scalars as Prove's do there (prefetched)
		same := [...]bool{phA: fused.g1[phA].Equal(&out.g1[phA]), phB1: fused.g1[phB1].Equal(&out.g1[phB1]),
			phB2: fused.g2.Equal(&out.g2)}
		for _, ph := range []phase{phA, phB1, phB2} {
			if !same[ph] {
				checks[ph], errs = "MISMATCH", append(errs, fmt.Errorf("msm %s in the fused run: %w: differs from the host path", phaseShort[ph], errMismatch))
			}
		}
	}
	return errors.Join(errs...)
}

func printPartition(w io.Writer, pk *groth16.ProvingKey, res *partitionResult) {
	if len(res.runs) == 0 {
		return
	}
	cols := []string{fmt.Sprintf("phase (median of %d)", len(res.runs)), "wall", "MSM device", "MSM upload", "c"}
	for _, name := range stageName {
		cols = append(cols, name)
	}
	t := report.NewTable(append(cols, "check")...)
	for ph := range numPhases {
		if res.points[ph] == 0 {
			continue
		}
		row := []string{phaseLabel(ph, res.points[ph], pk), ms(res.wall[ph].median())}
		if ph == phQuotient {
			for range 3 + numStages {
				row = append(row, "-")
			}
		} else {
			row = append(row, ms(res.compute[ph].median()), ms(res.upload[ph].median()), fmt.Sprint(res.bits[ph]))
			for i := range numStages {
				row = append(row, ms(res.stage[ph][i].median()))
			}
		}
		t.Add(append(row, checkCell(res.checks[ph]))...)
	}
	total := []string{"total GPU work (one after another)", ms(res.runs.median()),
		ms(sumMSMs(&res.compute).median()), ms(sumMSMs(&res.upload).median()), ""}
	for i := range numStages {
		total = append(total, ms(sumStage(&res.stage, i).median()))
	}
	t.Add(append(total, "")...)
	t.Write(w)
	// With h on the GPU the timed runs have no quotient or L‖H MSM of their
	// own; the warm-up ran and checked them on the host path.
	for ph := range numPhases {
		if res.points[ph] == 0 && res.checks[ph] != "" {
			fmt.Fprintf(w, "warm-up, h through the host: %s %s\n", phaseShort[ph], res.checks[ph])
		}
	}
}

// sumStage returns, per run, the sum over the MSM phases of stage i.
func sumStage(v *[numPhases][numStages]samples, i int) samples {
	var col [numPhases]samples
	for ph := range numPhases {
		col[ph] = v[ph][i]
	}
	return sumMSMs(&col)
}

func checkCell(s string) string {
	if s == "" {
		return "not checked"
	}
	return s
}
