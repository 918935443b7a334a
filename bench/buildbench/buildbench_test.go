package buildbench_test

import (
	"bytes"
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/bench/buildbench"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// requireTools skips, visibly, where nvcc or ninja is not installed.
func requireTools(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("nvcc"); err != nil {
		t.Skip("nvcc not installed (run `go run mage.go toolchain:install`): the sequence runs the real compiler")
	}
	if _, err := exec.LookPath("ninja"); err != nil {
		t.Skip("ninja not installed (Debian package ninja-build): the sequence compares against it")
	}
}

// The fixture tree: a.cu includes only_a.cuh and common.cuh; b.cu and c.cu
// include bc.cuh and common.cuh.
func TestSequenceCountsOnFixture(t *testing.T) {
	requireTools(t)
	if testing.Short() {
		t.Skip("-short: the sequence runs nvcc 36 times (about a minute)")
	}
	pins, err := toolchain.Load(nil)
	require.NoError(t, err)
	res, err := buildbench.Run(context.Background(), "../../toolchain/kbuild/testdata/tree", t.TempDir(), pins,
		buildbench.Config{Archs: []string{"sm_80"}, Jobs: 2, NoOpRuns: 3})
	require.NoError(t, err)

	want := []struct {
		name                         string
		changed, min, cuzk, ninjaRun int
	}{
		{"1 cold build", 3, 3, 3, 3},
		{"2 no-op", 0, 0, 0, 0},
		{"3 edit common.cuh", 3, 3, 3, 3},
		{"4 revert common.cuh", 3, 0, 0, 3},
		{"5 switch A→B (bc.cuh, a.cu)", 3, 3, 3, 3},
		{"5 switch B→A", 3, 0, 0, 3},
		{"6 flag --extra-device-vectorization", 3, 3, 3, 3},
		{"7 touch all sources", 0, 0, 0, 3},
	}
	require.Len(t, res.Steps, len(want))
	for i, w := range want {
		s := res.Steps[i]
		assert.Equal(t, w.name, s.Name)
		assert.Equal(t, []int{w.changed, w.min, w.cuzk, w.ninjaRun}, []int{s.Changed, s.Min, s.Cuzk.Nvcc, s.Ninja.Nvcc}, s.Name)
		assert.Empty(t, s.Differ, "%s: both builders produce the same fatbins", s.Name)
		assert.Positive(t, s.Cuzk.Wall, s.Name)
		assert.Positive(t, s.Ninja.Wall, s.Name)
		if s.Ninja.Nvcc > 0 {
			assert.Greater(t, s.Ninja.CPU, 100*time.Millisecond, "%s: ninja's compiles cost CPU", s.Name)
		}
		if s.Cuzk.Nvcc > 0 {
			assert.Greater(t, s.Cuzk.CPU, 100*time.Millisecond, "%s: the engine's compiles cost CPU", s.Name)
		} else {
			assert.Less(t, s.Cuzk.CPU, 50*time.Millisecond, "%s: a hit runs no compiler", s.Name)
		}
	}
	assert.Equal(t, buildbench.Picks{Header: "cuda/include/fx/common.cuh", HeaderUnits: []string{"a", "b", "c"},
		SwitchHeader: "cuda/include/fx/bc.cuh", SwitchSource: "cuda/kernels/a.cu"}, res.Picks)
	assert.Equal(t, []string{"a", "b", "c"}, res.Units)
	assert.Len(t, res.EngineNoOp.Runs, 3)

	checks := res.Checks()
	require.Len(t, checks, 3)
	assert.True(t, checks[0].Pass, checks[0].Detail)
	assert.True(t, checks[1].Pass, checks[1].Detail)
	assert.Contains(t, checks[1].Detail, "(9 vs 18)")

	var buf bytes.Buffer
	require.NoError(t, res.WriteTable(&buf))
	t.Log("\n" + buf.String())
	assert.Contains(t, buf.String(), "archs sm_80 only")
	assert.Regexp(t, `total after cold build\s+15\s+9\s+9\s+\S+\s+\S+\s+18\s+\S+\s+\S+\s+yes`, buf.String())
}
