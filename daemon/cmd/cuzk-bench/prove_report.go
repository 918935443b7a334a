package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cuzk-dev/cuzk/internal/report"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// errMismatch reports a GPU result that differs from the CPU reference.
var errMismatch = errors.New("GPU result differs from the CPU reference")

// errUnverified reports a proof that failed the pairing check.
var errUnverified = errors.New("proof did not verify")

// totals returns synthesis + prove per run.
func (r *backendResult) totals() samples {
	out := make(samples, len(r.synth))
	for i := range out {
		out[i] = r.synth[i] + r.prove[i]
	}
	return out
}

func (r *backendResult) ran() bool { return r != nil && r.unavailable == "" }

func (r *backendResult) cell(s samples) string {
	if !r.ran() {
		return r.unavailable
	}
	return ms(s.median())
}

// sumPhases returns, per run, the sum over the MSM phases of v.
func sumMSMs(v *[numPhases]samples) samples {
	out := make(samples, len(v[phA]))
	for ph := phA; ph < numPhases; ph++ {
		for i, d := range v[ph] {
			out[i] += d
		}
	}
	return out
}

func byName(results []*backendResult, name string) *backendResult {
	for _, r := range results {
		if r.name == name {
			return r
		}
	}
	return nil
}

// proveTable lays out the medians, one column per backend, and the CPU/GPU
// speed-up when both ran.
func proveTable(pk *groth16.ProvingKey, results []*backendResult) *report.Table {
	runs := 0
	header := []string{"phase"}
	for _, r := range results {
		header = append(header, r.name)
		runs = max(runs, len(r.synth))
	}
	header[0] = fmt.Sprintf("phase (median of %d)", runs)
	c, g := byName(results, "cpu"), byName(results, "gpu")
	both := c.ran() && g.ran()
	if both {
		header = append(header, "cpu/gpu")
	}
	t := report.NewTable(header...)
	// row adds pick's medians; a backend for which has is false gets "-".
	row := func(label string, pick func(*backendResult) samples, has func(*backendResult) bool) {
		cells := []string{label}
		for _, r := range results {
			if !has(r) {
				cells = append(cells, "-")
				continue
			}
			cells = append(cells, r.cell(pickOrNil(r, pick)))
		}
		if both {
			sp := "-"
			if has(c) && has(g) {
				sp = ratio(pick(c).median(), pick(g).median())
			}
			cells = append(cells, sp)
		}
		t.Add(cells...)
	}
	all := func(*backendResult) bool { return true }
	gpuOnly := func(r *backendResult) bool { return r.name == "gpu" }
	row("synthesis (witness, a, b, c)", func(r *backendResult) samples { return r.synth }, all)
	for ph := range numPhases {
		points := 0
		for _, r := range results {
			points = max(points, r.points[ph])
		}
		if points > 0 {
			// A backend that fused the quotient with L‖H has neither alone.
			row(phaseLabel(ph, points, pk), func(r *backendResult) samples { return r.wall[ph] },
				func(r *backendResult) bool { return !r.ran() || r.points[ph] > 0 })
		}
	}
	row("  MSM scalar uploads (all MSMs)", func(r *backendResult) samples { return sumMSMs(&r.upload) }, gpuOnly)
	row("  MSM device compute (all MSMs)", func(r *backendResult) samples { return sumMSMs(&r.compute) }, gpuOnly)
	row("prove (groth16.Prove)", func(r *backendResult) samples { return r.prove }, all)
	row("prove, calls overlapping", func(r *backendResult) samples { return r.overlapped }, all)
	row("verify (pairing check)", func(r *backendResult) samples { return r.verify }, all)
	row("total (synthesis + prove)", (*backendResult).totals, all)
	return t
}

func pickOrNil(r *backendResult, pick func(*backendResult) samples) samples {
	if !r.ran() {
		return nil
	}
	return pick(r)
}

// summarize prints the verification and equality checks and the totals,
// and returns an error for any failed check.
func summarize(w io.Writer, results []*backendResult) error {
	var errs []error
	for _, r := range results {
		if !r.ran() {
			fmt.Fprintf(w, "%s: %s\n", r.name, r.unavailable)
			continue
		}
		ok := len(r.proofs) - len(r.failed)
		fmt.Fprintf(w, "%s: %d of %d proofs verified (pairing check, warm-up included)\n", r.name, ok, len(r.proofs))
		if len(r.failed) > 0 {
			errs = append(errs, fmt.Errorf("%s: %w: %s", r.name, errUnverified, strings.Join(r.failed, "; ")))
		}
		n := len(r.overlapped)
		fmt.Fprintf(w, "%s: overlapped proof == timed proof byte for byte (same r, s): %d of %d\n", r.name, r.sameOverlapped, n)
		if r.sameOverlapped != n {
			errs = append(errs, fmt.Errorf("%s: %w: %d of %d overlapped proofs differ from the timed runs'", r.name, errMismatch, n-r.sameOverlapped, n))
		}
	}
	c, g := byName(results, "cpu"), byName(results, "gpu")
	if !c.ran() || !g.ran() {
		return errors.Join(errs...)
	}
	equal := 0
	for i := range min(len(c.proofs), len(g.proofs)) {
		if bytes.Equal(c.proofs[i], g.proofs[i]) {
			equal++
		}
	}
	fmt.Fprintf(w, "gpu proof == cpu proof byte for byte (same r, s per run): %d of %d\n", equal, len(c.proofs))
	if equal != len(c.proofs) || len(g.proofs) != len(c.proofs) {
		errs = append(errs, fmt.Errorf("proofs: %w (%d of %d equal)", errMismatch, equal, len(c.proofs)))
	}
	ct, gt := c.totals().median(), g.totals().median()
	fmt.Fprintf(w, "total per proof: cpu %s, gpu %s, speed-up %s (prove only: %s; calls overlapping: %s)\n",
		ms(ct), ms(gt), ratio(ct, gt), ratio(c.prove.median(), g.prove.median()),
		ratio(c.overlapped.median(), g.overlapped.median()))
	return errors.Join(errs...)
}
