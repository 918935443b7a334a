package ci

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/toolchain"
)

// doorOptions are options for the kernel build engine's three-kernel
// fixture tree (copied from toolchain/kbuild's testdata) with its own kernel
// cache, built for sm_80 only, in the environment env.
func doorOptions(t *testing.T, cache string, env ...string) Options {
	t.Helper()
	root := filepath.Join(t.TempDir(), "tree")
	require.NoError(t, os.CopyFS(root, os.DirFS("../toolchain/kbuild/testdata/tree")))
	environ := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "CUZK_ARCHS=sm_80", "CUZK_PTX="}, env...)
	pins, err := toolchain.Load(environ)
	require.NoError(t, err)
	return Options{Root: root, Pins: pins, Environ: environ, Log: io.Discard,
		HostCaches: HostCaches{GoMod: t.TempDir(), Kernels: cache, Dir: t.TempDir()}}
}

// TestKernelDoor goes through the one door with the real nvcc: it decides
// once and says what; a native build's report is what the engine did, and
// CUZK_KERNELS_REPORT gets the same file a container step writes; with no
// nvcc and every kernel cached, the caches alone build; a container choice
// names its executor and builds nothing natively.
func TestKernelDoor(t *testing.T) {
	if _, err := exec.LookPath("nvcc"); err != nil {
		t.Skip("nvcc not installed (run `go run mage.go toolchain:install`): the door's native build needs the real compiler")
	}
	ctx := context.Background()
	cache := t.TempDir()
	reportFile := filepath.Join(t.TempDir(), "kernels.json")
	o := doorOptions(t, cache, EnvKernelsReport+"="+reportFile)
	b, err := ChooseKernelBuild(ctx, o, io.Discard)
	require.NoError(t, err)
	if b.Choice.Mode != toolchain.Native || b.Choice.Cached {
		t.Skipf("the nvcc here is not the pinned build (%s): the door chose %s", b.Choice.Local.Identity, b)
	}
	assert.True(t, strings.HasPrefix(b.String(), "native ("), b.String())
	began := time.Now()
	r, err := b.Build(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, r.Units)
	assert.Equal(t, 3, r.Nvcc, "an empty cache: every kernel compiled")
	assert.Zero(t, r.Hits)
	files, err := TreeHashes(filepath.Join(o.Root, "cuda", "fatbin"))
	require.NoError(t, err)
	assert.Equal(t, files, r.Files, "the report lists what the build left in cuda/fatbin")
	assert.Contains(t, r.Files, "manifest.json")
	for _, k := range r.Kernels {
		assert.Equal(t, "built", k.Status)
		assert.Len(t, k.ActionID, 64)
		assert.Equal(t, r.Files[k.Name+".fatbin"], k.SHA256, k.Name)
	}
	written, err := ReadKernelsReport(reportFile, began)
	require.NoError(t, err)
	assert.False(t, written.Cached)
	assert.Equal(t, r.Files, written.Files, "CUZK_KERNELS_REPORT holds the same report")

	// No nvcc at all, every kernel in the cache: the caches alone build.
	o2 := doorOptions(t, cache, "CUZK_CUDA_NVCC=/nonexistent/nvcc")
	b, err = ChooseKernelBuild(ctx, o2, io.Discard)
	require.NoError(t, err)
	assert.True(t, b.Choice.Cached, "every kernel is a hit: %s", b)
	assert.Contains(t, b.String(), "from the caches")
	r, err = b.Build(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, r.Hits)
	assert.Zero(t, r.Nvcc)
	f2, err := TreeHashes(filepath.Join(o2.Root, "cuda", "fatbin"))
	require.NoError(t, err)
	assert.Equal(t, files, f2, "the same fatbins and manifest, from the cache")

	// CUZK_VERIFY recompiles hits, so it never takes the caches alone.
	o3 := doorOptions(t, cache, "CUZK_CUDA_NVCC=/nonexistent/nvcc", "CUZK_TOOLCHAIN=native", "CUZK_VERIFY=1")
	_, err = ChooseKernelBuild(ctx, o3, io.Discard)
	assert.ErrorContains(t, err, "toolchain:install", "verify needs the pinned nvcc")

	// The container: one executor, named; nothing is built natively.
	if !toolchain.ExecutorReady(ctx, toolchain.Docker, os.Environ()) {
		o4 := doorOptions(t, t.TempDir(), "CUZK_TOOLCHAIN=container", "CUZK_EXECUTOR=docker")
		_, err = ChooseKernelBuild(ctx, o4, io.Discard)
		assert.ErrorContains(t, err, "CUZK_EXECUTOR=docker does not answer", "a forced executor that does not answer is an error, not a fallback")
	}
	if toolchain.ExecutorReady(ctx, toolchain.Podman, os.Environ()) {
		o5 := doorOptions(t, t.TempDir(), "CUZK_TOOLCHAIN=container", "CUZK_EXECUTOR=podman")
		b, err = ChooseKernelBuild(ctx, o5, io.Discard)
		require.NoError(t, err)
		assert.Equal(t, toolchain.Podman, b.Choice.Executor)
		assert.Equal(t, "container (podman, cuzk's build image)", b.String())
		assert.Nil(t, b.kernels, "a container choice builds nothing natively")
		assert.Equal(t, toolchain.Podman, b.opts.Executor, "the pipeline runs with the executor chosen here, not a second choice")
	}
}
