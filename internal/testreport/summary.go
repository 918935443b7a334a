package testreport

import (
	"fmt"
	"io"
	"strings"
)

// Failure is one failed test (or subtest).
type Failure struct {
	Package    string
	Test       string
	Unfinished bool // still running when its package failed (a timeout, a crash)
}

// Summary is what a test run did. Counts include subtests.
type Summary struct {
	Packages       int // packages whose tests ran
	NoTests        int // packages without test files
	Passed         int
	Skips          []Skip
	Failures       []Failure
	FailedPackages []string // failed packages, a build failure or a test's
	module         string
}

// Failed reports whether any package failed.
func (s Summary) Failed() bool { return len(s.FailedPackages) > 0 }

// CheckCI returns an error wrapping ErrSkipped, listing the tests, when a
// test was skipped for a reason the hardware does not explain (Class
// Other); nil otherwise.
func (s Summary) CheckCI() error { return disallowedError(s.Skips, s.module) }

// WriteSkips prints the skipped tests grouped by reason, the reasons CI
// does not allow first, each with its class, count and tests:
//
//	skipped: 3 tests for 2 reasons
//	   2  [other] nginx not installed (apt-get install nginx; .ci/run does): …
//	        internal/nginx.TestServe, toolchain/kbuild.TestRemoteHit
//	   1  [no GPU] no CUDA GPU on this machine: cuda driver: no usable CUDA GPU
//	        prover/gpu.TestMSM
func (s Summary) WriteSkips(w io.Writer) error {
	if len(s.Skips) == 0 {
		_, err := fmt.Fprintln(w, "skipped: none")
		return err
	}
	groups := groupSkips(s.Skips)
	var b strings.Builder
	fmt.Fprintf(&b, "skipped: %d %s for %d %s\n", len(s.Skips), plural(len(s.Skips), "test", "tests"),
		len(groups), plural(len(groups), "reason", "reasons"))
	for _, g := range groups {
		fmt.Fprintf(&b, "  %3d  [%s] %s\n", len(g.skips), g.class, indent(g.reason, strings.Repeat(" ", 8)))
		fmt.Fprintf(&b, "        %s\n", strings.Join(testNames(g.skips, s.module), ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Write prints the totals, the skips (WriteSkips) and the failed tests.
func (s Summary) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "tests: %d passed, %d failed, %d skipped in %d %s (%d without tests)\n",
		s.Passed, len(s.Failures), len(s.Skips), s.Packages, plural(s.Packages, "package", "packages"), s.NoTests)
	if err := s.WriteSkips(&b); err != nil {
		return err
	}
	if len(s.Failures) > 0 {
		names := make([]string, len(s.Failures))
		for i, f := range s.Failures {
			names[i] = shortPackage(f.Package, s.module) + "." + f.Test
			if f.Unfinished {
				names[i] += " (did not finish)"
			}
		}
		fmt.Fprintf(&b, "FAILED: %s\n", strings.Join(names, ", "))
	}
	for _, p := range s.FailedPackages {
		fmt.Fprintf(&b, "FAIL %s\n", shortPackage(p, s.module))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// testNames names skips as package.Test, the package relative to module.
func testNames(skips []Skip, module string) []string {
	names := make([]string, len(skips))
	for i, s := range skips {
		names[i] = shortPackage(s.Package, module) + "." + s.Test
	}
	return names
}

// indent indents every line of s but the first by prefix.
func indent(s, prefix string) string { return strings.ReplaceAll(s, "\n", "\n"+prefix) }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
