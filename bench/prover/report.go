package proverbench

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cuzk-dev/cuzk/internal/report"
	"github.com/cuzk-dev/cuzk/internal/stats"
)

// Targets the table checks.
const (
	// SynthesisTarget is the synthesis rate to reach, in constraints per
	// second per core (cuzk's CPU prover goal for porep-synth).
	SynthesisTarget = 2.5e6
	// RatioTarget is the largest acceptable cuzk/gnark time ratio: cuzk's
	// CPU prover must be at least as fast as gnark's.
	RatioTarget = 1.0
)

// sum adds two sample series run by run.
func sum(a, b []time.Duration) []time.Duration {
	out := make([]time.Duration, min(len(a), len(b)))
	for i := range out {
		out[i] = a[i] + b[i]
	}
	return out
}

// SynthesisRate is cuzk's median synthesis rate in constraints per second
// on one core: the comparison solves with r1cs.WithWorkers(1), so its rate
// is one core's (cuzk-bench synth measures the parallel solve).
func (s Size) SynthesisRate() float64 {
	d := stats.Median(s.Ours.Synthesis)
	if d <= 0 {
		return 0
	}
	return float64(s.Ours.Constraints) / d.Seconds()
}

// ProveRatio is cuzk's median Prove time over gnark's (gnark's prover
// after its solver, the same work: quotient and MSMs).
func (s Size) ProveRatio() float64 {
	return ratio(stats.Median(s.Ours.Prove), stats.Median(s.Gnark.Prove))
}

// TotalRatio is cuzk's median synthesis + Prove over gnark's whole
// groth16.Prove call (solver included).
func (s Size) TotalRatio() float64 {
	return ratio(stats.Median(sum(s.Ours.Synthesis, s.Ours.Prove)), stats.Median(s.Gnark.Total))
}

func ratio(a, b time.Duration) float64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

// Err reports every check that missed its target, nil when all pass.
func (r *Result) Err() error {
	var errs []error
	for _, s := range r.Sizes {
		name := SizeString(s.Ours.Target)
		if pc := s.SynthesisRate(); pc < SynthesisTarget {
			errs = append(errs, fmt.Errorf("%s: synthesis %.2f M constraints/s/core, target %.1f", name, pc/1e6, SynthesisTarget/1e6))
		}
		if q := s.ProveRatio(); q > RatioTarget {
			errs = append(errs, fmt.Errorf("%s: prove %.2fx gnark's, target ≤ %.1fx", name, q, RatioTarget))
		}
		if q := s.TotalRatio(); q > RatioTarget {
			errs = append(errs, fmt.Errorf("%s: synthesis + prove %.2fx gnark's, target ≤ %.1fx", name, q, RatioTarget))
		}
	}
	return errors.Join(errs...)
}

// WriteTable prints the comparison, one column per size.
func (r *Result) WriteTable(w io.Writer) error {
	gnark := "gnark"
	if len(r.Sizes) > 0 {
		gnark = "gnark " + r.Sizes[0].Gnark.Gnark
	}
	fmt.Fprintf(w, "porep-synth, CPU, GOMAXPROCS=%d on both sides (%d CPUs), median of %d proofs after a warm-up; cuzk vs %s\n",
		r.Procs, r.NumCPU, r.Runs, gnark)
	header := []string{"porep-synth"}
	for _, s := range r.Sizes {
		header = append(header, SizeString(s.Ours.Target))
	}
	t := report.NewTable(header...)
	for _, row := range rows {
		cells := []string{row.label}
		for _, s := range r.Sizes {
			cells = append(cells, row.cell(s))
		}
		t.Add(cells...)
	}
	return t.Write(w)
}

// row is one line of the table: a label and how to fill a size's cell.
type row struct {
	label string
	cell  func(Size) string
}

func ours(pick func(*OursReport) []time.Duration) func(Size) string {
	return func(s Size) string { return stats.FormatDuration(stats.Median(pick(s.Ours))) }
}

func theirs(pick func(*GnarkReport) []time.Duration) func(Size) string {
	return func(s Size) string { return stats.FormatDuration(stats.Median(pick(s.Gnark))) }
}

var rows = []row{
	{"constraints", func(s Size) string { return fmt.Sprint(s.Ours.Constraints) }},
	{"private wires (gnark: given + solved)", func(s Size) string {
		return fmt.Sprintf("%d (%d + %d)", s.Ours.Private, s.Gnark.Secret, s.Gnark.Internal)
	}},
	{"cuzk synthesis (r1cs.Solve)", ours(func(o *OursReport) []time.Duration { return o.Synthesis })},
	{fmt.Sprintf("  M constraints/s, one core (≥ %.1f)", SynthesisTarget/1e6), func(s Size) string {
		pc := s.SynthesisRate()
		return fmt.Sprintf("%.2f %s", pc/1e6, verdict(pc >= SynthesisTarget))
	}},
	{"cuzk quotient H (7 NTTs)", ours(func(o *OursReport) []time.Duration { return o.Quotient })},
	// groth16.Prove runs the three G1 MSMs at once, then the G2 MSM alone.
	{"cuzk MSM A   G1 ┐ at once:", ours(func(o *OursReport) []time.Duration { return o.MSMA })},
	{"cuzk MSM B   G1 │ walls overlap", ours(func(o *OursReport) []time.Duration { return o.MSMB1 })},
	{"cuzk MSM L‖H G1 ┘", ours(func(o *OursReport) []time.Duration { return o.MSMLH })},
	{"cuzk MSM B   G2   after them, alone", ours(func(o *OursReport) []time.Duration { return o.MSMB2 })},
	{"cuzk prove (groth16.Prove)", ours(func(o *OursReport) []time.Duration { return o.Prove })},
	{"cuzk synthesis + prove", ours(func(o *OursReport) []time.Duration { return sum(o.Synthesis, o.Prove) })},
	{"cuzk peak RSS", func(s Size) string { return rss(s.OursRSS) }},
	{"gnark solve", theirs(func(g *GnarkReport) []time.Duration { return g.Solve })},
	{"gnark prove (after solve)", theirs(func(g *GnarkReport) []time.Duration { return g.Prove })},
	{"gnark groth16.Prove (solve + prove)", theirs(func(g *GnarkReport) []time.Duration { return g.Total })},
	{"gnark peak RSS", func(s Size) string { return rss(s.GnarkRSS) }},
	{fmt.Sprintf("cuzk/gnark prove (target ≤ %.1f)", RatioTarget), func(s Size) string {
		q := s.ProveRatio()
		return fmt.Sprintf("%.2fx %s", q, verdict(q > 0 && q <= RatioTarget))
	}},
	{fmt.Sprintf("cuzk/gnark synth+prove (≤ %.1f)", RatioTarget), func(s Size) string {
		q := s.TotalRatio()
		return fmt.Sprintf("%.2fx %s", q, verdict(q > 0 && q <= RatioTarget))
	}},
	{"setup cuzk / gnark", func(s Size) string {
		return setup(s.Ours.SetupCached, s.Ours.Setup) + " / " + setup(s.Gnark.SetupCached, s.Gnark.Setup)
	}},
}

func setup(cached bool, d time.Duration) string {
	if cached {
		return "cached"
	}
	return stats.FormatDuration(d)
}

// rss writes a peak resident set size in whole MiB, "-" when it was not
// measured.
func rss(b int64) string {
	if b <= 0 {
		return "-"
	}
	return stats.FormatMiB(b)
}
