package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cuzk-dev/cuzk/bench/benchinput"
	"github.com/cuzk-dev/cuzk/bench/gpubench"
	"github.com/cuzk-dev/cuzk/internal/report"
	"github.com/cuzk-dev/cuzk/internal/stats"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// errMismatch reports a GPU result that differs from the CPU reference.
var errMismatch = benchinput.ErrMismatch

// errUnverified reports a proof that failed the pairing check.
var errUnverified = errors.New("proof did not verify")

// cell is r's median of s, or why r did not run.
func cell(r *gpubench.BackendResult, s gpubench.Samples) string {
	if !r.Ran() {
		return r.Unavailable
	}
	return stats.MsSig(s.Median())
}

func byName(results []*gpubench.BackendResult, name string) *gpubench.BackendResult {
	for _, r := range results {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// proveTable lays out the medians, one column per backend, and the CPU/GPU
// speed-up when both ran.
func proveTable(pk *groth16.ProvingKey, results []*gpubench.BackendResult) *report.Table {
	runs := 0
	header := []string{"phase"}
	for _, r := range results {
		header = append(header, r.Name)
		runs = max(runs, len(r.Synth))
	}
	header[0] = fmt.Sprintf("phase (median of %d)", runs)
	c, g := byName(results, "cpu"), byName(results, "gpu")
	both := c.Ran() && g.Ran()
	if both {
		header = append(header, "cpu/gpu")
	}
	t := report.NewTable(header...)
	// row adds pick's medians; a backend for which has is false gets "-".
	row := func(label string, pick func(*gpubench.BackendResult) gpubench.Samples, has func(*gpubench.BackendResult) bool) {
		cells := []string{label}
		for _, r := range results {
			if !has(r) {
				cells = append(cells, "-")
				continue
			}
			cells = append(cells, cell(r, pickOrNil(r, pick)))
		}
		if both {
			sp := "-"
			if has(c) && has(g) {
				sp = ratio(pick(c).Median(), pick(g).Median())
			}
			cells = append(cells, sp)
		}
		t.Add(cells...)
	}
	type result = gpubench.BackendResult
	all := func(*result) bool { return true }
	gpuOnly := func(r *result) bool { return r.Name == "gpu" }
	row("synthesis (witness, a, b, c)", func(r *result) gpubench.Samples { return r.Synth }, all)
	for ph := range gpubench.NumPhases {
		points := 0
		for _, r := range results {
			points = max(points, r.Points[ph])
		}
		if points > 0 {
			// A backend that fused the quotient with L‖H has neither alone.
			row(phaseLabel(ph, points), func(r *result) gpubench.Samples { return r.Phases.Wall[ph] },
				func(r *result) bool { return !r.Ran() || r.Points[ph] > 0 })
		}
	}
	row("  MSM scalar uploads (all MSMs)", func(r *result) gpubench.Samples { return gpubench.SumMSMs(&r.Phases.Upload) }, gpuOnly)
	row("  MSM device compute (all MSMs)", func(r *result) gpubench.Samples { return gpubench.SumMSMs(&r.Phases.Compute) }, gpuOnly)
	row("prove (groth16.Prove)", func(r *result) gpubench.Samples { return r.Prove }, all)
	row("prove, calls overlapping", func(r *result) gpubench.Samples { return r.Overlapped }, all)
	row("verify (pairing check)", func(r *result) gpubench.Samples { return r.Verify }, all)
	row("total (synthesis + prove)", (*result).Totals, all)
	return t
}

func pickOrNil(r *gpubench.BackendResult, pick func(*gpubench.BackendResult) gpubench.Samples) gpubench.Samples {
	if !r.Ran() {
		return nil
	}
	return pick(r)
}

// phaseLabel is a phase's table label; points is the MSM's size (the
// domain size for the quotient).
func phaseLabel(ph gpubench.Phase, points int) string {
	switch ph {
	case gpubench.PhQuotient:
		return fmt.Sprintf("quotient H (7 NTTs, %s)", stats.FormatCount(points))
	case gpubench.PhA:
		return fmt.Sprintf("MSM A     G1 %d", points)
	case gpubench.PhB1:
		return fmt.Sprintf("MSM B     G1 %d", points)
	case gpubench.PhB2:
		return fmt.Sprintf("MSM B     G2 %d", points)
	case gpubench.PhLH:
		return fmt.Sprintf("MSM L‖H   G1 %d", points)
	default:
		return fmt.Sprintf("MSM L‖H   G1 %d, h on GPU", points)
	}
}

// summarize prints the verification and equality checks and the totals,
// and returns an error for any failed check.
func summarize(w io.Writer, results []*gpubench.BackendResult) error {
	var errs []error
	for _, r := range results {
		if !r.Ran() {
			fmt.Fprintf(w, "%s: %s\n", r.Name, r.Unavailable)
			continue
		}
		ok := len(r.Proofs) - len(r.Failed)
		fmt.Fprintf(w, "%s: %d of %d proofs verified (pairing check, warm-up included)\n", r.Name, ok, len(r.Proofs))
		if len(r.Failed) > 0 {
			errs = append(errs, fmt.Errorf("%s: %w: %s", r.Name, errUnverified, strings.Join(r.Failed, "; ")))
		}
		n := len(r.Overlapped)
		fmt.Fprintf(w, "%s: overlapped proof == timed proof byte for byte (same r, s): %d of %d\n", r.Name, r.SameOverlapped, n)
		if r.SameOverlapped != n {
			errs = append(errs, fmt.Errorf("%s: %w: %d of %d overlapped proofs differ from the timed runs'", r.Name,
				errMismatch, n-r.SameOverlapped, n))
		}
	}
	c, g := byName(results, "cpu"), byName(results, "gpu")
	if !c.Ran() || !g.Ran() {
		return errors.Join(errs...)
	}
	equal := 0
	for i := range min(len(c.Proofs), len(g.Proofs)) {
		if bytes.Equal(c.Proofs[i], g.Proofs[i]) {
			equal++
		}
	}
	fmt.Fprintf(w, "gpu proof == cpu proof byte for byte (same r, s per run): %d of %d\n", equal, len(c.Proofs))
	if equal != len(c.Proofs) || len(g.Proofs) != len(c.Proofs) {
		errs = append(errs, fmt.Errorf("proofs: %w (%d of %d equal)", errMismatch, equal, len(c.Proofs)))
	}
	ct, gt := c.Totals().Median(), g.Totals().Median()
	fmt.Fprintf(w, "total per proof: cpu %s, gpu %s, speed-up %s (prove only: %s; calls overlapping: %s)\n",
		stats.MsSig(ct), stats.MsSig(gt), ratio(ct, gt), ratio(c.Prove.Median(), g.Prove.Median()),
		ratio(c.Overlapped.Median(), g.Overlapped.Median()))
	return errors.Join(errs...)
}
