package buildbench_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/bench/buildbench"
)

func TestTimingMedian(t *testing.T) {
	cases := []struct {
		runs []time.Duration
		want time.Duration
		pass bool
	}{
		{nil, 0, false},
		{[]time.Duration{7}, 7, true},
		{[]time.Duration{9, 1, 5}, 5, true},
		{[]time.Duration{40, 10, 30, 20}, 25, false},
		{[]time.Duration{12, 9, 8, 11}, 10, true},
	}
	for _, tc := range cases {
		tm := buildbench.Timing{Runs: tc.runs, Target: 10}
		assert.Equal(t, tc.want, tm.Median(), tc.runs)
		assert.Equal(t, tc.pass, tm.Pass(), tc.runs)
	}
}

func result(cuzk, ninja, min []int) buildbench.Result {
	r := buildbench.Result{Archs: []string{"sm_90"}, Jobs: 2, Units: []string{"a", "b", "c"},
		EngineNoOp: buildbench.Timing{Name: "noop", Runs: []time.Duration{time.Millisecond}, Target: 50 * time.Millisecond}}
	for i := range cuzk {
		r.Steps = append(r.Steps, buildbench.Step{Name: "s" + string(rune('0'+i)), Min: min[i],
			Cuzk:  buildbench.Side{Nvcc: cuzk[i], Wall: time.Second, CPU: 3 * time.Millisecond},
			Ninja: buildbench.Side{Nvcc: ninja[i], Wall: 2 * time.Second, CPU: 4 * time.Second}})
	}
	return r
}

func TestChecks(t *testing.T) {
	cases := []struct {
		name             string
		cuzk, ninja, min []int
		pass             []bool
	}{
		{"minimal and half", []int{3, 0, 3}, []int{3, 3, 3}, []int{3, 0, 3}, []bool{true, true, true}},
		{"one extra compile", []int{3, 1, 3}, []int{3, 3, 3}, []int{3, 0, 3}, []bool{false, false, true}},
		{"cold build does not count", []int{9, 0, 1}, []int{9, 1, 1}, []int{9, 0, 1}, []bool{true, true, true}},
		{"minimal but no better than ninja", []int{3, 1}, []int{3, 1}, []int{3, 1}, []bool{true, false, true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := result(tc.cuzk, tc.ninja, tc.min)
			var got []bool
			for _, c := range r.Checks() {
				got = append(got, c.Pass)
			}
			assert.Equal(t, tc.pass, got)
			if tc.pass[0] && tc.pass[1] {
				assert.NoError(t, r.Err())
			} else {
				assert.ErrorContains(t, r.Err(), "checks missed")
			}
		})
	}
	r := result([]int{3, 1}, []int{3, 3}, []int{3, 0})
	assert.Contains(t, r.Checks()[0].Detail, "s1: 1 vs 0")

	slow := buildbench.Timing{Name: "mage", Runs: []time.Duration{2 * time.Second}, Target: 1500 * time.Millisecond}
	r.MageNoOp = &slow
	checks := r.Checks()
	require.Len(t, checks, 4)
	assert.False(t, checks[3].Pass)
	assert.Equal(t, "mage: median 2s of 1 runs, target <= 1.5s", checks[3].Detail)
}

func TestWriteTable(t *testing.T) {
	r := result([]int{3, 0, 0}, []int{3, 0, 3}, []int{3, 0, 0})
	r.Steps[2].Changed = 3
	r.Picks = buildbench.Picks{Header: "i/h.cuh", HeaderUnits: []string{"a", "b", "c"}, SwitchHeader: "i/g.cuh", SwitchSource: "k/a.cu"}
	var buf bytes.Buffer
	require.NoError(t, r.WriteTable(&buf))
	out := buf.String()
	for _, want := range []string{
		"3 units, archs sm_90 only (no PTX), 2 parallel nvcc each",
		"step                    changed units  min  cuzk nvcc  cuzk time  cuzk cpu  ninja nvcc  ninja time  ninja cpu  same bytes",
		"s2                      3              0    0          1s         3.0ms     3           2s          4s         yes",
		"total after cold build  3              0    0          2s         6.0ms     3           4s          8s         yes",
		"edited: header i/h.cuh (units a,b,c); branch B: header i/g.cuh and source k/a.cu",
		"PASS  cuzk nvcc runs == minimum in every step",
		"PASS  noop: median 1.0ms of 1 runs, target <= 50.0ms",
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "other bytes")

	r.Steps[2].Differ = []string{"c", "b"}
	buf.Reset()
	require.NoError(t, r.WriteTable(&buf))
	assert.Contains(t, buf.String(), "4s         no: b,c")
	assert.Contains(t, buf.String(), "gave other bytes than the engine's stored one")
}

func TestTimeCommand(t *testing.T) {
	dir := t.TempDir()
	tm, err := buildbench.TimeCommand(context.Background(), "count", dir, []string{"BB_TEST=x"},
		[]string{"sh", "-c", `echo "$BB_TEST" >> runs`}, 2, 3, time.Minute)
	require.NoError(t, err)
	assert.Len(t, tm.Runs, 3)
	b, err := os.ReadFile(filepath.Join(dir, "runs"))
	require.NoError(t, err)
	assert.Equal(t, "x\nx\nx\nx\nx\n", string(b), "warm runs run too, untimed")

	_, err = buildbench.TimeCommand(context.Background(), "fail", dir, nil, []string{"sh", "-c", "echo boom; exit 3"}, 0, 1, time.Minute)
	assert.ErrorContains(t, err, "boom")
}

func TestSnapshotTakesHeadNotTheWorkingTree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed: Snapshot runs git archive")
	}
	repo := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	git("init", "-q")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "cuda/kernels"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "cuda/kernels/a.cu"), []byte("committed"), 0o644))
	git("add", ".")
	git("commit", "-q", "-m", "one")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "cuda/kernels/a.cu"), []byte("in progress"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "untracked.go"), []byte("x"), 0o644))

	dst := t.TempDir()
	require.NoError(t, buildbench.Snapshot(context.Background(), repo, dst))
	b, err := os.ReadFile(filepath.Join(dst, "cuda/kernels/a.cu"))
	require.NoError(t, err)
	assert.Equal(t, "committed", string(b))
	assert.NoFileExists(t, filepath.Join(dst, "untracked.go"))

	assert.Error(t, buildbench.Snapshot(context.Background(), t.TempDir(), t.TempDir()), "not a repository")
}
