package ci

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/toolchain"
)

func TestCLIRunArgs(t *testing.T) {
	o := testOptions(t)
	o.HostCaches = HostCaches{GoMod: t.TempDir(), Kernels: t.TempDir(), Dir: t.TempDir()}
	p, err := KernelsPlan(o)
	require.NoError(t, err)
	img := fakeImage(t)
	for _, e := range []toolchain.Executor{toolchain.Podman, toolchain.Docker} {
		rt, err := newCLIRuntime(e)
		require.NoError(t, err)
		args, err := rt.runArgs(p, img, "/tmp/stage", "/tmp/out")
		require.NoError(t, err)
		line := strings.Join(args, " ")
		assert.Contains(t, line, "run --rm --network none --platform linux/amd64", e)
		assert.Contains(t, line, "-v /tmp/stage:/src -w /src", e)
		assert.Contains(t, line, "--security-opt seccomp=unconfined", "%s: nvcc may turn ASLR off", e)
		assert.Contains(t, line, "-v "+o.HostCaches.GoMod+":"+o.HostCaches.GoMod+":ro ", "%s: the host's module cache, at its own path, read-only", e)
		assert.Contains(t, line, "-v /tmp/out:/cuzk-out ", "%s: the reports come back", e)
		assert.Contains(t, line, "echo 1 >'/cuzk-out/.step'\n", "%s: the running step is recorded", e)
		assert.Contains(t, line, "-e GOMODCACHE="+o.HostCaches.GoMod+" ", e)
		assert.Contains(t, line, "-v "+o.HostCaches.Kernels+":/cache/cuzk", "%s: the host's kernel cache", e)
		assert.Contains(t, line, "-e CUZK_IMAGE="+o.Pins.Images.Build, e)
		assert.Contains(t, line, " "+img.Tag()+" sh -c set -e\n", e)
		assert.Contains(t, line, "'go' 'run' 'mage.go' 'kernels'", e)
		assert.DirExists(t, p.Caches[1].Host, "cache directories are made")
		assert.True(t, strings.HasPrefix(p.Caches[1].Host, o.HostCaches.Dir+"/cuzk-go-build-go"+o.Pins.Go+"-linux-amd64-"), p.Caches[1].Host)
		if e == toolchain.Podman {
			assert.Contains(t, line, "--ulimit nofile=1024:1024")
		} else {
			assert.NotContains(t, line, "--runtime", "docker keeps its own runtime")
		}
	}
	_, err = newCLIRuntime(toolchain.Dagger)
	assert.Error(t, err)

	p.Caches[0].Host = ""
	rt, _ := newCLIRuntime(toolchain.Podman)
	_, err = rt.runArgs(p, img, "/tmp/stage", "/tmp/out")
	assert.ErrorContains(t, err, "has no host directory")
}

func TestScriptQuotes(t *testing.T) {
	s := script([]Step{{Why: "it's", Args: []string{"sh", "-c", `echo "$HOME" 'x'`}}}, "")
	assert.Equal(t, "set -e\necho '== step: it'\\''s'\n'sh' '-c' 'echo \"$HOME\" '\\''x'\\'''\n", s)
}

func TestScriptRecordsTheStep(t *testing.T) {
	s := script([]Step{{Why: "a", Args: []string{"true"}}, {Why: "b", Args: []string{"false"}}}, "/out")
	assert.Equal(t, "set -e\necho 0 >'/out/.step'\necho '== step: a'\n'true'\necho 1 >'/out/.step'\necho '== step: b'\n'false'\n", s)
}

func TestCopyTreeExcludes(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	files := []string{"go.mod", ".git/HEAD", "bin/cuzk-daemon", "cuda/fatbin/README.md", "cuda/fatbin/msm.fatbin",
		"cuda/fatbin/manifest.json", "prover/x.test", "prover/x.go", "dist/SHA256SUMS"}
	for _, f := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(src, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(src, f), []byte(f), 0o644))
	}
	require.NoError(t, os.Symlink("go.mod", filepath.Join(src, "link")))
	require.NoError(t, copyTree(src, dst, SourceExclude))
	got, err := TreeHashes(dst)
	require.NoError(t, err)
	var names []string
	for n := range got {
		names = append(names, n)
	}
	assert.ElementsMatch(t, []string{"go.mod", "cuda/fatbin/README.md", "prover/x.go"}, names)
	l, err := os.Readlink(filepath.Join(dst, "link"))
	require.NoError(t, err)
	assert.Equal(t, "go.mod", l, "links stay links")

	// An export over an existing tree replaces files and keeps the others.
	require.NoError(t, os.WriteFile(filepath.Join(dst, "keep"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "go.mod"), []byte("new"), 0o644))
	require.NoError(t, copyTree(src, dst, SourceExclude))
	b, err := os.ReadFile(filepath.Join(dst, "go.mod"))
	require.NoError(t, err)
	assert.Equal(t, "new", string(b))
	assert.FileExists(t, filepath.Join(dst, "keep"))
}

func TestModuleDirs(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"go.mod", "bench/gnark/go.mod", "prover/testdata/mod/go.mod", "prover/x.go"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, f), nil, 0o644))
	}
	dirs, err := moduleDirs(root)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{root, filepath.Join(root, "bench", "gnark")}, dirs, "nested modules too, testdata left out")
}
