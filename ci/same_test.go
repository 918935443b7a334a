package ci

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTreeHashesAndDiff(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, "image", "blobs"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "image", "blobs", "x"), []byte("same"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(d, "manifest.json"), []byte("m-"+d), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(b, "extra"), nil, 0o644))
	ha, err := TreeHashes(a)
	require.NoError(t, err)
	hb, err := TreeHashes(b)
	require.NoError(t, err)
	assert.Len(t, ha, 2)
	assert.Contains(t, ha, "image/blobs/x")
	d := DiffTrees(ha, hb)
	require.Len(t, d, 2)
	assert.True(t, strings.HasPrefix(d[0], "manifest.json: "), d[0])
	assert.Equal(t, "only in the second: extra", d[1])
	assert.Empty(t, DiffTrees(ha, hb, "manifest.json", "extra"))
	assert.Empty(t, DiffTrees(ha, ha))
}

func TestSameReportProblems(t *testing.T) {
	files := map[string]string{"k.fatbin": strings.Repeat("a", 64), "manifest.json": strings.Repeat("b", 64)}
	report := func(units, hits, remote, nvcc int, cached bool) *KernelsReport {
		return &KernelsReport{Units: units, Hits: hits, Remote: remote, Nvcc: nvcc, Files: files, Cached: cached}
	}
	good := SameReport{
		Kernels: []Run{{Name: "native", Files: files, Kernels: report(12, 12, 0, 0, false)},
			{Name: "cold", Files: files, Kernels: report(12, 0, 0, 12, false)},
			{Name: "warm", Files: files, Kernels: report(12, 12, 0, 0, false)}},
		Release: []Run{{Name: "native release", Files: files}, {Name: "container release", Files: files}},
	}
	assert.Empty(t, good.Problems())
	table := SameTable(good.Kernels)
	assert.Contains(t, table, "byte-identical")
	assert.Contains(t, table, "ran")

	// Served from the executor's cache, the same reports keep every check:
	// the reports describe the inputs the steps had, and those were the
	// same.
	cached := good
	cached.Kernels = []Run{good.Kernels[0], {Name: "cold", Files: files, Kernels: report(12, 0, 0, 12, true)},
		{Name: "warm", Files: files, Kernels: report(12, 12, 0, 0, true)}}
	assert.Empty(t, cached.Problems())
	assert.Contains(t, SameTable(cached.Kernels), "cached")

	// A remote cache may serve the cold leg: remote hits are not local ones.
	remote := good
	remote.Kernels = []Run{good.Kernels[0], {Name: "cold", Files: files, Kernels: report(12, 12, 12, 0, false)}, good.Kernels[2]}
	assert.Empty(t, remote.Problems())

	bad := good
	other := map[string]string{"k.fatbin": strings.Repeat("c", 64), "manifest.json": strings.Repeat("b", 64)}
	coldOther := report(12, 3, 0, 9, false)
	coldOther.Files = other
	bad.Kernels = []Run{good.Kernels[0], {Name: "cold", Files: other, Kernels: coldOther},
		{Name: "warm", Files: files, Kernels: report(12, 11, 0, 1, false)}}
	bad.Release = []Run{good.Release[0], {Name: "container release", Files: other}}
	p := bad.Problems()
	require.Len(t, p, 4, "%q", p)
	assert.Contains(t, p[0], "cold: cuda/fatbin differs")
	assert.Contains(t, p[1], "cold: 3 local hits of 12 units, want none")
	assert.Contains(t, p[2], "warm: 11 hits of 12 units and 1 nvcc runs")
	assert.Contains(t, p[3], "container release: dist differs")
	assert.Contains(t, SameTable(bad.Kernels), "1 differ: k.fatbin")

	// The files that came back must be the ones the report lists, and a
	// kernels run without a report is a problem, not a pass.
	lying := good
	lying.Kernels = []Run{good.Kernels[0], {Name: "cold", Files: other, Kernels: report(12, 0, 0, 12, false)}, {Name: "warm", Files: files}}
	p = lying.Problems()
	require.Len(t, p, 2, "%q", p)
	assert.Contains(t, p[0], "cold: the files that came back are not the ones its report lists")
	assert.Contains(t, p[1], "warm: no kernels report")
}

func TestKernelsReportRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kernels.json")
	began := time.Now()
	r := KernelsReport{Schema: KernelsReportSchema, Toolchain: "native", Units: 1, Hits: 1, Kernels: []KernelOutcome{{Name: "k", Status: "hit local"}},
		Files: map[string]string{"k.fatbin": "aa"}, Started: began.Add(time.Millisecond), Finished: began.Add(2 * time.Millisecond)}
	require.NoError(t, r.Write(path))
	got, err := ReadKernelsReport(path, began)
	require.NoError(t, err)
	assert.False(t, got.Cached, "written after the run began: the step ran")
	assert.Equal(t, r.Files, got.Files)
	got, err = ReadKernelsReport(path, began.Add(time.Second))
	require.NoError(t, err)
	assert.True(t, got.Cached, "finished before the run began: served from the executor's cache")

	for name, mutate := range map[string]func(*KernelsReport){
		"schema":   func(r *KernelsReport) { r.Schema = "other/1" },
		"units":    func(r *KernelsReport) { r.Units = 2 },
		"hits":     func(r *KernelsReport) { r.Hits = 3 },
		"no clock": func(r *KernelsReport) { r.Started = time.Time{} },
	} {
		bad := r
		mutate(&bad)
		require.NoError(t, bad.Write(path))
		_, err := ReadKernelsReport(path, began)
		assert.Error(t, err, name)
	}
	_, err = ReadKernelsReport(filepath.Join(t.TempDir(), "none.json"), began)
	assert.ErrorIs(t, err, ErrNoReport)
}

func TestTail(t *testing.T) {
	var lines []string
	for i := range 50 {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	got := Tail(strings.Join(lines, "\n") + "\n")
	assert.Equal(t, strings.Join(lines[30:], "\n"), got, "the last 20 lines")
	long := strings.Repeat("x", 10<<10) + "\nlast"
	assert.Equal(t, "last", Tail(long), "at most 4 KiB, cut at a line start")
	var w tailWriter
	for i := range 2000 {
		fmt.Fprintf(&w, "write %d\n", i)
	}
	assert.True(t, strings.HasSuffix(w.String(), "write 1999"), w.String())
	assert.LessOrEqual(t, len(w.buf), 4*tailBytes)
}

func TestStepErrorSaysStepAndStderr(t *testing.T) {
	steps := []Step{{Why: "check go", Args: []string{"sh", "-c", "true"}}, {Why: "build fatbins", Args: []string{"go", "run", "mage.go", "kernels"}}}
	e := &StepError{Pipeline: "kernels", Step: stepByArgs(steps, []string{"go", "run", "mage.go", "kernels"}), Exit: 1,
		Stderr: "go: module lookup disabled by GOPROXY=off", Err: errors.New("exit status 1")}
	msg := e.Error()
	assert.Contains(t, msg, `pipeline kernels: step "build fatbins" (go run mage.go kernels) failed with exit code 1`)
	assert.Contains(t, msg, "\n    go: module lookup disabled by GOPROXY=off")
	assert.ErrorIs(t, e, e.Err)
	assert.Equal(t, Step{Args: []string{"x"}}, stepByArgs(steps, []string{"x"}), "an unknown command is still named")
	early := &StepError{Pipeline: "kernels", Exit: 125, Stderr: "Error: no such image"}
	assert.Contains(t, early.Error(), "pipeline kernels: the container failed with exit code 125 before any step ran; the end of its stderr:\n    Error: no such image")
}
