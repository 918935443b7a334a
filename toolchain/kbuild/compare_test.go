package kbuild_test

import (
	"context"
	"github.com/cuzk-dev/cuzk/cuda/manifest"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/toolchain/kbuild"
)

// TestCompareSaysWhichKernelsOfARunningBinaryAreStale builds the fixture,
// takes its manifest as a daemon's, edits a header and checks that
// Compare names exactly the affected kernels and the changed file.
func TestCompareSaysWhichKernelsOfARunningBinaryAreStale(t *testing.T) {
	f := newFixture(t)
	f.mustBuild()
	b, err := os.ReadFile(f.path("cuda/fatbin/manifest.json"))
	require.NoError(t, err)
	man, err := manifest.Decode(b)
	require.NoError(t, err)
	running := man.Kernels

	cmp, err := f.engine().Compare(context.Background(), running)
	require.NoError(t, err)
	for _, s := range cmp {
		assert.False(t, s.Stale, s.Name)
		assert.Equal(t, s.Running, s.Current)
	}

	f.edit("cuda/include/fx/bc.cuh")
	cmp, err = f.engine().Compare(context.Background(), append(running, manifest.Kernel{Name: "gone", ActionID: "00"}))
	require.NoError(t, err)
	byName := map[string]kbuild.Staleness{}
	for _, s := range cmp {
		byName[s.Name] = s
	}
	assert.False(t, byName["a"].Stale)
	for _, n := range []string{"b", "c"} {
		assert.True(t, byName[n].Stale, n)
		assert.Equal(t, []string{"cuda/include/fx/bc.cuh changed"}, byName[n].Why, n)
	}
	assert.True(t, byName["gone"].Stale)
	assert.Equal(t, []string{"this tree has no such kernel"}, byName["gone"].Why)
	assert.Zero(t, f.nvccRuns()-3, "compare never compiles")
}
