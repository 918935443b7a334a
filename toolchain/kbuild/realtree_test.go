package kbuild_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/toolchain"
	"github.com/cuzk-dev/cuzk/toolchain/cas"
	"github.com/cuzk-dev/cuzk/toolchain/kbuild"
)

// realTree copies the repository's cuda/ tree into a temporary root and
// returns a fixture over it that shares the default kernel cache, so units
// that `go run mage.go kernels` already built are hits (keys do not depend on
// the tree's location). It skips, visibly, when the real tree is not built.
func realTree(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	require.NoError(t, os.RemoveAll(f.root))
	for _, d := range []string{"cuda/kernels", "cuda/include"} {
		require.NoError(t, os.CopyFS(filepath.Join(f.root, d), os.DirFS(filepath.Join("..", "..", d))))
	}
	pins, err := toolchain.LoadEnv()
	require.NoError(t, err)
	pins.CUDA.Nvcc = f.pins.CUDA.Nvcc // the counting wrapper
	f.pins = pins
	dir, err := cas.DefaultDir()
	require.NoError(t, err)
	f.store, err = cas.Open(dir)
	require.NoError(t, err)
	xs, err := f.engine().Explain(context.Background())
	require.NoError(t, err)
	for _, x := range xs {
		if !x.Fresh {
			t.Skipf("real tree not built with these pins (%s: %v): run `go run mage.go kernels` first", x.Unit.Name, x.Why)
		}
	}
	return f
}

func TestRealTreeNoOpAndHeaderEdit(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the header edit recompiles five real kernels")
	}
	f := realTree(t)
	rep := f.mustBuild()
	assert.Equal(t, 0, f.nvccRuns(), "a built tree is a no-op")
	assert.Equal(t, len(rep.Results), rep.Hits)

	// vec.cuh is the elementwise template: exactly the fr_* units include it.
	want := []string{}
	for _, r := range rep.Results {
		for _, in := range r.Unit.Inputs {
			if in.Path == "cuda/include/cuzk/vec.cuh" {
				want = append(want, r.Unit.Name)
			}
		}
	}
	require.GreaterOrEqual(t, len(want), 3, "vec.cuh is shared by several units")
	// The store is the user's real cache, which keeps every state it saw: a
	// fixed edit would be a hit from the second run on, so this one is new.
	old := f.read("cuda/include/cuzk/vec.cuh")
	f.write("cuda/include/cuzk/vec.cuh", fmt.Appendf(bytes.Clone(old), "\n// edited at %d\n", time.Now().UnixNano()))
	rep = f.mustBuild()
	assert.ElementsMatch(t, want, names(rep, kbuild.Built))
	assert.Equal(t, len(want), f.nvccRuns())
	f.write("cuda/include/cuzk/vec.cuh", old)
	f.mustBuild()
	assert.Equal(t, 0, f.nvccRuns(), "reverting is a cache hit")
}

func TestScannerMatchesNvccOnRealTree(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, os.RemoveAll(f.root))
	for _, d := range []string{"cuda/kernels", "cuda/include"} {
		require.NoError(t, os.CopyFS(filepath.Join(f.root, d), os.DirFS(filepath.Join("..", "..", d))))
	}
	units, err := f.engine().Plan(context.Background())
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(units), 5)
	for _, u := range units {
		assert.Equal(t, nvccDeps(t, "nvcc", f.root, []string{"cuda/include"}, u.Source), scannedInputs(u), u.Name)
	}
}
