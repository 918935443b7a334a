package ci

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseKernelLine(t *testing.T) {
	out := []byte("compiling msm_g1 (3/12)…\nkernels: 12 units, 3 hits (1 remote), 9 nvcc runs, 9 uploaded, 12 files written, 3m1s\n" +
		"== step\nkernels: 12 units, 12 hits (0 remote), 0 nvcc runs, 0 uploaded, 0 files written, 90ms\n")
	assert.Equal(t, KernelLine{Units: 12, Hits: 12, Remote: 0, Nvcc: 0, Seen: true}, ParseKernelLine(out), "the last line counts")
	assert.False(t, ParseKernelLine([]byte("release: dist/x.tar.gz")).Seen)
}

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
	warm := KernelLine{Units: 12, Hits: 12, Seen: true}
	good := SameReport{
		Kernels: []Run{{Name: "native", Files: files}, {Name: "cold", Files: files}, {Name: "warm", Files: files, Kernels: warm}},
		Release: []Run{{Name: "native release", Files: files}, {Name: "container release", Files: files}},
	}
	assert.Empty(t, good.Problems())
	table := SameTable(good.Kernels)
	assert.Contains(t, table, "byte-identical")

	bad := good
	other := map[string]string{"k.fatbin": strings.Repeat("c", 64), "manifest.json": strings.Repeat("b", 64)}
	bad.Kernels = []Run{good.Kernels[0], {Name: "cold", Files: other}, {Name: "warm", Files: files, Kernels: KernelLine{Units: 12, Hits: 11, Nvcc: 1, Seen: true}}}
	bad.Release = []Run{good.Release[0], {Name: "container release", Files: other}}
	p := bad.Problems()
	require.Len(t, p, 3)
	assert.Contains(t, p[0], "cold: cuda/fatbin differs")
	assert.Contains(t, p[1], "11 hits of 12 units and 1 nvcc runs")
	assert.Contains(t, p[2], "container release: dist differs")
	assert.Contains(t, SameTable(bad.Kernels), "1 differ: k.fatbin")
}
