package buildbench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Total sums the steps from index from on.
func (r Result) Total(from int) Step {
	t := Step{Name: "total"}
	for _, s := range r.Steps[min(from, len(r.Steps)):] {
		t.Changed += s.Changed
		t.Min += s.Min
		t.Cuzk = t.Cuzk.add(s.Cuzk)
		t.Ninja = t.Ninja.add(s.Ninja)
		for _, u := range s.Differ {
			if !contains(t.Differ, u) {
				t.Differ = append(t.Differ, u)
			}
		}
	}
	return t
}

// Check is one pass/miss line under the table.
type Check struct {
	Pass   bool
	Detail string
}

// Checks evaluates the benchmark's claims: the engine compiles exactly the
// minimum in every step; after the cold build it compiles at most half of
// what ninja does (the cold build costs both the same); the no-op timings
// meet their targets; and, when measured, the remote cache rows meet
// theirs.
func (r Result) Checks() []Check {
	var checks []Check
	if len(r.Steps) > 0 {
		checks = r.sequenceChecks()
	}
	if r.Remote != nil {
		checks = append(checks, r.Remote.checks()...)
	}
	return checks
}

func (r Result) sequenceChecks() []Check {
	var off []string
	for _, s := range r.Steps {
		if s.Cuzk.Nvcc != s.Min {
			off = append(off, fmt.Sprintf("%s: %d vs %d", s.Name, s.Cuzk.Nvcc, s.Min))
		}
	}
	detail := "cuzk nvcc runs == minimum in every step"
	if len(off) > 0 {
		detail += " (off: " + strings.Join(off, "; ") + ")"
	}
	inc := r.Total(1)
	checks := []Check{
		{len(off) == 0 && len(r.Steps) > 0, detail},
		{len(r.Steps) > 1 && 2*inc.Cuzk.Nvcc <= inc.Ninja.Nvcc,
			fmt.Sprintf("cuzk nvcc runs <= half of ninja's after the cold build (%d vs %d)", inc.Cuzk.Nvcc, inc.Ninja.Nvcc)},
	}
	for _, t := range []*Timing{&r.EngineNoOp, r.MageNoOp} {
		if t != nil && len(t.Runs) > 0 {
			checks = append(checks, Check{t.Pass(), fmt.Sprintf("%s: median %s of %d runs, target <= %s",
				t.Name, round(t.Median()), len(t.Runs), round(t.Target))})
		}
	}
	return checks
}

// WriteTable prints the comparison as aligned text: one row per step, the
// totals, the edited files, the remote cache rows and the checks.
func (r Result) WriteTable(w io.Writer) error {
	if len(r.Steps) > 0 {
		if err := r.writeSequence(w); err != nil {
			return err
		}
	}
	if r.Remote != nil {
		if err := r.Remote.write(w); err != nil {
			return err
		}
	}
	for _, c := range r.Checks() {
		verdict := "MISS"
		if c.Pass {
			verdict = "PASS"
		}
		fmt.Fprintf(w, "%s  %s\n", verdict, c.Detail)
	}
	return nil
}

func (r Result) writeSequence(w io.Writer) error {
	fmt.Fprintf(w, "cuzk kernel engine vs ninja: %d units, archs %s only (no PTX), %d parallel nvcc each\n",
		len(r.Units), strings.Join(r.Archs, ","), r.Jobs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "step\tchanged units\tmin\tcuzk nvcc\tcuzk time\tcuzk cpu\tninja nvcc\tninja time\tninja cpu\tsame bytes\t")
	rows := append(append([]Step(nil), r.Steps...), named(r.Total(0), "total"), named(r.Total(1), "total after cold build"))
	for _, s := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%d\t%s\t%s\t%s\t\n", s.Name, s.Changed, s.Min,
			s.Cuzk.Nvcc, round(s.Cuzk.Wall), round(s.Cuzk.CPU), s.Ninja.Nvcc, round(s.Ninja.Wall), round(s.Ninja.CPU), same(s.Differ))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	p := r.Picks
	fmt.Fprintf(w, "edited: header %s (units %s); branch B: header %s and source %s\n",
		p.Header, strings.Join(p.HeaderUnits, ","), p.SwitchHeader, p.SwitchSource)
	fmt.Fprintln(w, "time: wall clock of the build; cpu: user+system time of its compiler processes")
	if len(r.Total(0).Differ) > 0 {
		fmt.Fprintln(w, "same bytes \"no\": ninja's fresh compile of the same inputs and command gave other bytes than the engine's stored one")
	}
	return nil
}

func (s Side) add(o Side) Side {
	return Side{Nvcc: s.Nvcc + o.Nvcc, Wall: s.Wall + o.Wall, CPU: s.CPU + o.CPU}
}

func named(s Step, name string) Step { s.Name = name; return s }

func same(differ []string) string {
	if len(differ) == 0 {
		return "yes"
	}
	return "no: " + joinNames(differ)
}

// round keeps durations readable: milliseconds below a second, tenths above.
func round(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return d.Round(100 * time.Millisecond).String()
}

// Err returns an error naming every check that missed, or nil.
func (r Result) Err() error {
	var miss []string
	for _, c := range r.Checks() {
		if !c.Pass {
			miss = append(miss, c.Detail)
		}
	}
	if len(miss) == 0 {
		return nil
	}
	return fmt.Errorf("buildbench: %d checks missed:\n  %s", len(miss), strings.Join(miss, "\n  "))
}
