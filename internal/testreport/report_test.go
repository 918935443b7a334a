package testreport_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/internal/testreport"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from what the Reporter prints")

// TestRecordedRuns reads recorded `go test -json` streams (Go 1.26) and
// checks the Summary and, against a golden file, the printed account.
func TestRecordedRuns(t *testing.T) {
	for _, tc := range []struct {
		name     string
		module   string
		passed   int
		failures []string // package.Test, package relative to module
		failPkgs int
		noTests  int
		skips    map[testreport.Class]int
		ciFails  []string // tests CheckCI names
	}{
		{
			name: "cuzk-nogpu", module: "github.com/cuzk-dev/cuzk", passed: 23,
			skips: map[testreport.Class]int{testreport.NoGPU: 11},
		},
		{
			name: "mixed", module: "example.com/rec", passed: 3,
			failures: []string{"tools.TestFail", "tools.TestFailSub/inner", "tools.TestFailSub", "panics.TestPanic"},
			failPkgs: 3, noTests: 1,
			skips: map[testreport.Class]int{testreport.NoGPU: 3, testreport.GPUPresent: 1, testreport.Other: 5},
			ciFails: []string{"gpu.TestSelftest", "tools.TestProtoc", "tools.TestNginx", "tools.TestMultiline",
				"tools.TestSkipNow"},
		},
		{
			name: "timeout", module: "example.com/rec", failPkgs: 1, failures: []string{"slow.TestSlow"},
			skips: map[testreport.Class]int{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := os.Open(filepath.Join("testdata", tc.name+".jsonl"))
			require.NoError(t, err)
			defer in.Close()
			var out bytes.Buffer
			r, err := testreport.New(&out, testreport.WithModule(tc.module))
			require.NoError(t, err)
			require.NoError(t, r.Read(in))
			s := r.Summary()
			require.NoError(t, s.Write(&out))

			assert.Equal(t, tc.passed, s.Passed)
			assert.Equal(t, tc.failPkgs, len(s.FailedPackages))
			assert.Equal(t, tc.failPkgs > 0, s.Failed())
			assert.Equal(t, tc.noTests, s.NoTests)
			var failures []string
			for _, f := range s.Failures {
				failures = append(failures, strings.TrimPrefix(f.Package, tc.module+"/")+"."+f.Test)
			}
			assert.ElementsMatch(t, tc.failures, failures)
			classes := map[testreport.Class]int{}
			for _, sk := range s.Skips {
				classes[sk.Class]++
			}
			assert.Equal(t, tc.skips, classes)
			err = s.CheckCI()
			if tc.ciFails == nil {
				assert.NoError(t, err)
			} else {
				require.ErrorIs(t, err, testreport.ErrSkipped)
				for _, name := range tc.ciFails {
					assert.Contains(t, err.Error(), name)
				}
				assert.NotContains(t, err.Error(), "TestNoGPU", "a missing GPU is allowed")
			}
			golden(t, filepath.Join("testdata", tc.name+".golden"), out.String())
		})
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to write it")
	assert.Equal(t, string(want), got)
}

func TestSkipReasons(t *testing.T) {
	in, err := os.Open("testdata/mixed.jsonl")
	require.NoError(t, err)
	defer in.Close()
	r, err := testreport.New(new(bytes.Buffer))
	require.NoError(t, err)
	require.NoError(t, r.Read(in))
	got := map[string]string{}
	for _, s := range r.Summary().Skips {
		got[s.Test] = s.Reason
	}
	for test, reason := range map[string]string{
		"TestNoGPU":     "SKIP (visible): no CUDA GPU on this machine: cuda driver: no usable CUDA GPU", // not the t.Log before it
		"TestSub/h=on":  "no GPU here: checked exit status 3; kernels not run",                          // a parallel subtest
		"TestMultiline": "first line\nsecond line",
		"TestSkipNow":   "(no message: t.SkipNow)",
	} {
		assert.Equal(t, reason, got[test], test)
	}
}

func TestFailuresPrintInFull(t *testing.T) {
	var out bytes.Buffer
	r, err := testreport.New(&out, testreport.WithModule("example.com/rec"))
	require.NoError(t, err)
	for _, name := range []string{"mixed", "timeout"} {
		b, err := os.ReadFile(filepath.Join("testdata", name+".jsonl"))
		require.NoError(t, err)
		require.NoError(t, r.Read(bytes.NewReader(b)))
	}
	for _, want := range []string{
		"    tools_test.go:19: want 1\n        got 2\n    tools_test.go:20: another\n--- FAIL: TestFail", // every line of the message
		"panic: boom [recovered, repanicked]",                     // a panic's trace
		"cannot use \"s\" (untyped string constant) as int value", // the compiler's error
		"FAIL broken 0s [build failed]",
		"--- TestSlow did not finish:\n=== RUN   TestSlow\n    s_test.go:5: waiting\npanic: test timed out after 1s", // a timeout
	} {
		assert.Contains(t, out.String(), want)
	}
	assert.NotContains(t, out.String(), "fine\n", "a passing test's log stays quiet")
}

func TestNonEventLinesPassThrough(t *testing.T) {
	var out bytes.Buffer
	r, err := testreport.New(&out)
	require.NoError(t, err)
	require.NoError(t, r.Read(strings.NewReader("go: warning: something\n{not json\n")))
	assert.Equal(t, "go: warning: something\n{not json\n", out.String())
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want testreport.Class
	}{
		// the GPU tests' messages, as the repository's skips print them
		{"SKIP (visible): no CUDA GPU on this machine: cuda driver: no usable CUDA GPU", testreport.NoGPU},
		{"no CUDA GPU on this machine: cuda driver: no usable CUDA GPU", testreport.NoGPU},
		{"GPU test skipped: no CUDA GPU here (cuda driver: no usable CUDA GPU)", testreport.NoGPU},
		{"no GPU here: checked exit status 3; kernels not run", testreport.NoGPU},
		{"no GPU here: gpubench: no GPU", testreport.NoGPU},
		{"a CUDA device is present (1); the no-GPU path is not reachable here", testreport.GPUPresent},
		{"device allows only 49152 bytes of opt-in shared memory", testreport.SmallGPU},
		// prefixes GPU skips share with set-up skips
		{"GPU test skipped: cuda: no kernels embedded in this binary (run `go run mage.go build`)", testreport.Other},
		{"SKIP (visible): no kernels embedded in this test binary (built by `go run mage.go gpu`): x", testreport.Other},
		{"SKIP (visible): protoc is not installed here; .ci/run installs it, so CI runs this test", testreport.Other},
		{"SKIP (visible): builds and runs the daemon binary; not in -short", testreport.Other},
		// a GPU mentioned further in is not a missing GPU
		{"kernels not materialized (no CUDA GPU): `go run mage.go test` builds them first", testreport.Other},
		{"nvcc not installed (run `go run mage.go toolchain:install`): kernel build tests need the real compiler", testreport.Other},
		{"podman is installed here; the default engine check could reach it", testreport.Other},
		{"(no message: t.SkipNow)", testreport.Other},
	} {
		assert.Equal(t, tc.want, testreport.Classify(tc.msg), tc.msg)
		assert.Equal(t, tc.want != testreport.Other, tc.want.Allowed(), tc.msg)
	}
}

func TestWithModuleValidates(t *testing.T) {
	_, err := testreport.New(nil, testreport.WithModule("a b"))
	assert.Error(t, err)
}

func ExampleSummary_WriteSkips() {
	r, _ := testreport.New(new(bytes.Buffer), testreport.WithModule("example.com/m"))
	for _, e := range []testreport.Event{
		{Action: "output", Package: "example.com/m/gpu", Test: "TestMSM", Output: "    gpu_test.go:9: no GPU here: none\n"},
		{Action: "skip", Package: "example.com/m/gpu", Test: "TestMSM"},
		{Action: "output", Package: "example.com/m/cache", Test: "TestRemote", Output: "    remote_test.go:3: nginx not installed\n"},
		{Action: "skip", Package: "example.com/m/cache", Test: "TestRemote"},
	} {
		r.Handle(e)
	}
	s := r.Summary()
	_ = s.WriteSkips(os.Stdout)
	fmt.Println(s.CheckCI())
	// Output:
	// skipped: 2 tests for 2 reasons
	//     1  [other] nginx not installed
	//         cache.TestRemote
	//     1  [no GPU] no GPU here: none
	//         gpu.TestMSM
	// CI=true: tests skipped for reasons other than the hardware: 1 test (in CI only the hardware, such as a missing GPU, may skip a test; set up what they need):
	//   nginx not installed
	//     cache.TestRemote
}
