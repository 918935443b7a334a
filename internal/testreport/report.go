package testreport

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Option configures a Reporter; bad values are rejected by New.
type Option func(*Reporter) error

// WithModule shortens package paths under module in what is printed
// (github.com/cuzk-dev/cuzk/toolchain/kbuild prints as toolchain/kbuild).
func WithModule(module string) Option {
	return func(r *Reporter) error {
		if strings.ContainsAny(module, " \t\n") {
			return fmt.Errorf("testreport: module %q has white space", module)
		}
		r.module = strings.TrimSuffix(module, "/")
		return nil
	}
}

// Reporter prints a test run as its events arrive and collects its
// Summary. It is not safe for concurrent use.
type Reporter struct {
	w      io.Writer
	module string
	pkgs   map[string]*pkgState
	builds map[string][]string // build output by ImportPath
	sum    Summary
}

type pkgState struct {
	out                     []string // output outside any test
	tests                   map[string]*testState
	order                   []string // tests in start order
	passed, failed, skipped int
}

type testState struct {
	out  []string
	log  lastLog
	done bool
}

// New returns a Reporter that prints to w.
func New(w io.Writer, opts ...Option) (*Reporter, error) {
	r := &Reporter{w: w, pkgs: map[string]*pkgState{}, builds: map[string][]string{}}
	for _, o := range opts {
		if err := o(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Read handles every line of a `go test -json` stream until EOF. A line
// that is not an event (go test prints a few) is printed as it is. The
// error is only the stream's own.
func (r *Reporter) Read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20) // a test may print long lines
	for sc.Scan() {
		line := sc.Bytes()
		var e Event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			r.printf("%s\n", line)
			continue
		}
		r.Handle(e)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("testreport: read go test -json: %w", err)
	}
	return nil
}

// Handle takes one event.
func (r *Reporter) Handle(e Event) {
	switch e.Action {
	case "build-output":
		r.builds[e.ImportPath] = append(r.builds[e.ImportPath], e.Output)
		return
	case "build-fail":
		r.printf("%s", strings.Join(r.builds[e.ImportPath], ""))
		delete(r.builds, e.ImportPath)
		return
	}
	if e.Package == "" {
		return
	}
	p := r.pkg(e.Package)
	if e.Test == "" {
		r.packageEvent(p, e)
		return
	}
	t := p.tests[e.Test]
	if t == nil {
		t = &testState{}
		p.tests[e.Test] = t
		p.order = append(p.order, e.Test)
	}
	switch e.Action {
	case "output":
		t.out = append(t.out, e.Output)
		t.log.add(strings.TrimSuffix(e.Output, "\n"))
	case "pass":
		t.done = true
		p.passed++
		r.sum.Passed++
	case "skip":
		t.done = true
		p.skipped++
		reason := t.log.message()
		r.sum.Skips = append(r.sum.Skips, Skip{Package: e.Package, Test: e.Test, Reason: reason, Class: Classify(reason)})
	case "fail":
		t.done = true
		p.failed++
		r.sum.Failures = append(r.sum.Failures, Failure{Package: e.Package, Test: e.Test})
		r.printf("=== FAIL %s %s\n%s", r.short(e.Package), e.Test, strings.Join(t.out, ""))
	}
	if t.done {
		t.out = nil // only a failure prints it, and that was now
	}
}

func (r *Reporter) pkg(name string) *pkgState {
	p := r.pkgs[name]
	if p == nil {
		p = &pkgState{tests: map[string]*testState{}}
		r.pkgs[name] = p
	}
	return p
}

// packageEvent handles an event outside any test: the package's own
// output, and its end, which prints the package's line.
func (r *Reporter) packageEvent(p *pkgState, e Event) {
	name := r.short(e.Package)
	elapsed := time.Duration(e.Elapsed * float64(time.Second)).Round(10 * time.Millisecond)
	switch e.Action {
	case "output":
		p.out = append(p.out, e.Output)
	case "skip": // no test files
		r.sum.NoTests++
	case "pass":
		r.sum.Packages++
		r.printf("ok   %s %s  (%s)\n", name, elapsed, p.counts())
	case "fail":
		r.sum.Packages++
		r.sum.FailedPackages = append(r.sum.FailedPackages, e.Package)
		for _, t := range p.order {
			if st := p.tests[t]; !st.done {
				p.failed++
				r.sum.Failures = append(r.sum.Failures, Failure{Package: e.Package, Test: t, Unfinished: true})
				r.printf("--- %s did not finish:\n%s", t, strings.Join(st.out, ""))
			}
		}
		r.printf("%s", strings.Join(p.ownOutput(e.Package), ""))
		why := ""
		if e.FailedBuild != "" {
			why = " [build failed]"
		}
		r.printf("FAIL %s %s%s  (%s)\n", name, elapsed, why, p.counts())
	}
}

// ownOutput is the package's output outside its tests, without the
// result lines go test prints, which the Reporter prints its own way.
func (p *pkgState) ownOutput(pkg string) []string {
	var out []string
	for _, l := range p.out {
		if l == "FAIL\n" || l == "PASS\n" || strings.HasPrefix(l, "FAIL\t"+pkg) || strings.HasPrefix(l, "ok  \t"+pkg) {
			continue
		}
		out = append(out, l)
	}
	return out
}

func (p *pkgState) counts() string {
	parts := []string{fmt.Sprintf("%d passed", p.passed)}
	if p.failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", p.failed))
	}
	if p.skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped", p.skipped))
	}
	return strings.Join(parts, ", ")
}

// short is a package path relative to the module, where it is inside it.
func (r *Reporter) short(pkg string) string { return shortPackage(pkg, r.module) }

func shortPackage(pkg, module string) string {
	switch {
	case module == "":
		return pkg
	case pkg == module:
		return "."
	case strings.HasPrefix(pkg, module+"/"):
		return strings.TrimPrefix(pkg, module+"/")
	}
	return pkg
}

func (r *Reporter) printf(format string, args ...any) {
	_, _ = fmt.Fprintf(r.w, format, args...) // the account is advisory: the Summary and go test's exit status decide
}

// Summary returns what the run did so far; after Read, the whole run.
func (r *Reporter) Summary() Summary {
	s := r.sum
	s.module = r.module
	return s
}
