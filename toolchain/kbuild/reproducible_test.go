package kbuild_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLargeKernelIsReproducible compiles the real msm_g2 kernel for sm_90
// three times, each with its own cache and a differently sized environment:
// the fatbins must be equal. ptxas 11.8 orders some tables of this cubin by
// heap address; with address randomization on, compiles of the same input
// differed now and then (kbuild runs nvcc with it off, see noRandomize).
func TestLargeKernelIsReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: compiles msm_g2 for sm_90 three times (about a minute)")
	}
	var outs [][]byte
	for i := range 3 {
		f := newFixture(t)
		require.NoError(t, os.RemoveAll(f.root))
		require.NoError(t, os.CopyFS(filepath.Join(f.root, "cuda/include"), os.DirFS("../../cuda/include")))
		require.NoError(t, os.MkdirAll(filepath.Join(f.root, "cuda/kernels"), 0o755))
		src, err := os.ReadFile("../../cuda/kernels/msm_g2.cu")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(f.root, "cuda/kernels/msm_g2.cu"), src, 0o644))
		f.pins.Archs = []string{"sm_90"}
		t.Setenv("CUZK_TEST_PADDING", strings.Repeat("x", i*4096))
		rep := f.mustBuild()
		require.Equal(t, 1, rep.Compile)
		outs = append(outs, f.outputs()["msm_g2.fatbin"])
		require.NotEmpty(t, outs[i])
	}
	assert.Equal(t, outs[0], outs[1], "second compile")
	assert.Equal(t, outs[0], outs[2], "third compile")
}
