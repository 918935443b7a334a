package testreport

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Class is why, in kind, a test was skipped.
type Class string

// Skip classes. Only Other fails a CI run: the rest are the machine's
// hardware, which no set-up step can change.
const (
	NoGPU      Class = "no GPU"        // no CUDA device (or driver) on this machine
	GPUPresent Class = "GPU present"   // a test of the no-GPU path, on a machine with a GPU
	SmallGPU   Class = "GPU too small" // the device lacks a capability the test needs
	Other      Class = "other"         // a missing tool or build, -short, …: set-up CI must do
)

// Allowed reports whether CI may pass with a skip of class c.
func (c Class) Allowed() bool { return c != Other }

// hardwareRules map a skip message's start, after the prefixes in
// skipPrefixes, to its class. They are anchored on purpose: "SKIP
// (visible):" and "GPU test skipped:" also start skips that are not about
// hardware (protoc missing, no kernels embedded), and a reason quoting an
// error that mentions a GPU further in is not a missing GPU. Each rule
// names the tests whose messages it matches.
var hardwareRules = []struct {
	prefix string
	class  Class
}{
	{"no CUDA GPU", NoGPU},                   // cuda/driver, cuda/selftest, daemon/engine, prover/gpu, prover/groth16/keyfile
	{"no GPU here", NoGPU},                   // bench/cmd/cuzk-bench, bench/gpubench
	{"a CUDA device is present", GPUPresent}, // cuda/driver, cuda/selftest: the ErrNoGPU path
	{"device allows only ", SmallGPU},        // cuda/driver: opt-in shared memory below the test's need
}

// skipPrefixes are stripped from a message before the rules match.
var skipPrefixes = []string{"SKIP (visible): ", "GPU test skipped: "}

// Classify returns the class of a skip message.
func Classify(reason string) Class {
	r := reason
	for _, p := range skipPrefixes {
		r = strings.TrimPrefix(r, p)
	}
	for _, rule := range hardwareRules {
		if strings.HasPrefix(r, rule.prefix) {
			return rule.class
		}
	}
	return Other
}

// Skip is one skipped test (or subtest).
type Skip struct {
	Package string
	Test    string
	Reason  string // the skip message, lines joined by "\n"; noMessage when there was none
	Class   Class
}

// noMessage is the reason of a test skipped without a message (t.SkipNow).
const noMessage = "(no message: t.SkipNow)"

// ErrSkipped is returned by CheckCI when tests were skipped for reasons
// other than the hardware.
var ErrSkipped = errors.New("tests skipped for reasons other than the hardware")

// reasonGroup is the skips that share one message.
type reasonGroup struct {
	reason string
	class  Class
	skips  []Skip
}

// groupSkips groups skips by message: those CI does not allow first, then
// by count, largest first, then by message.
func groupSkips(skips []Skip) []reasonGroup {
	byReason := map[string]*reasonGroup{}
	var groups []*reasonGroup
	for _, s := range skips {
		g, ok := byReason[s.Reason]
		if !ok {
			g = &reasonGroup{reason: s.Reason, class: s.Class}
			byReason[s.Reason] = g
			groups = append(groups, g)
		}
		g.skips = append(g.skips, s)
	}
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		if a.class.Allowed() != b.class.Allowed() {
			return !a.class.Allowed()
		}
		if len(a.skips) != len(b.skips) {
			return len(a.skips) > len(b.skips)
		}
		return a.reason < b.reason
	})
	out := make([]reasonGroup, len(groups))
	for i, g := range groups {
		out[i] = *g
	}
	return out
}

// disallowedError lists the skips CI does not allow, grouped by reason.
func disallowedError(skips []Skip, module string) error {
	var bad []Skip
	for _, s := range skips {
		if !s.Class.Allowed() {
			bad = append(bad, s)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	var b strings.Builder
	for _, g := range groupSkips(bad) {
		fmt.Fprintf(&b, "\n  %s\n    %s", indent(g.reason, "  "), strings.Join(testNames(g.skips, module), ", "))
	}
	return fmt.Errorf("CI=true: %w: %d %s (in CI only the hardware, such as a missing GPU, may skip a test; set up what they need):%s",
		ErrSkipped, len(bad), plural(len(bad), "test", "tests"), b.String())
}
