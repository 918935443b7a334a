package kbuild_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/toolchain"
	"github.com/cuzk-dev/cuzk/toolchain/cas"
	"github.com/cuzk-dev/cuzk/toolchain/kbuild"
)

// fixture is a copy of testdata/tree with its own cache, built by the real
// nvcc through a wrapper that logs every compile, so tests count real runs.
type fixture struct {
	t     *testing.T
	root  string
	store *cas.Store
	pins  toolchain.Pins
	tc    toolchain.Local
	log   string
	opts  []kbuild.Option // added to every engine (a bare fixture's compiler finder)
}

// requireNvcc skips, visibly, where the pinned compiler is not installed.
func requireNvcc(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("nvcc")
	if err != nil {
		t.Skip("nvcc not installed (run `go run mage.go toolchain:install`): kernel build tests need the real compiler")
	}
	return p
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	real := requireNvcc(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "tree")
	require.NoError(t, os.CopyFS(root, os.DirFS("testdata/tree")))
	log := filepath.Join(dir, "nvcc.log")
	wrapper := filepath.Join(dir, "bin", "nvcc")
	require.NoError(t, os.MkdirAll(filepath.Dir(wrapper), 0o755))
	script := "#!/bin/sh\ncase \"$*\" in *-fatbin*) echo \"$*\" >> " + log + ";; esac\nexec " + real + " \"$@\"\n"
	require.NoError(t, os.WriteFile(wrapper, []byte(script), 0o755))

	pins, err := toolchain.Load(nil)
	require.NoError(t, err)
	pins.Archs, pins.PTX = []string{"sm_80"}, nil // one target keeps the fixture fast
	pins.CUDA.Nvcc = wrapper
	tc, err := toolchain.Detect(context.Background(), pins, nil)
	require.NoError(t, err)
	store, err := cas.Open(filepath.Join(dir, "cache"))
	require.NoError(t, err)
	return &fixture{t: t, root: root, store: store, pins: pins, tc: tc, log: log}
}

func (f *fixture) engine(opts ...kbuild.Option) *kbuild.Engine {
	f.t.Helper()
	all := append(append([]kbuild.Option{kbuild.WithJobs(2)}, f.opts...), opts...)
	e, err := kbuild.New(f.root, f.pins, f.tc, f.store, all...)
	require.NoError(f.t, err)
	return e
}

func (f *fixture) build(opts ...kbuild.Option) (kbuild.Report, error) {
	return f.engine(opts...).Build(context.Background())
}

func (f *fixture) mustBuild(opts ...kbuild.Option) kbuild.Report {
	f.t.Helper()
	rep, err := f.build(opts...)
	require.NoError(f.t, err)
	return rep
}

// nvccRuns returns how many compiles the wrapper saw since the last call.
func (f *fixture) nvccRuns() int {
	f.t.Helper()
	b, err := os.ReadFile(f.log)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(f.t, err)
	require.NoError(f.t, os.Remove(f.log))
	return strings.Count(string(b), "\n")
}

func (f *fixture) path(rel string) string { return filepath.Join(f.root, filepath.FromSlash(rel)) }

func (f *fixture) read(rel string) []byte {
	f.t.Helper()
	b, err := os.ReadFile(f.path(rel))
	require.NoError(f.t, err)
	return b
}

func (f *fixture) write(rel string, b []byte) {
	f.t.Helper()
	require.NoError(f.t, os.WriteFile(f.path(rel), b, 0o644))
}

// edit appends a harmless line to a source file and returns the old bytes.
func (f *fixture) edit(rel string) []byte {
	f.t.Helper()
	old := f.read(rel)
	f.write(rel, append(append([]byte{}, old...), []byte("\n// edited\n")...))
	return old
}

func names(rep kbuild.Report, s kbuild.Status) []string {
	var out []string
	for _, r := range rep.Results {
		if r.Status == s {
			out = append(out, r.Unit.Name)
		}
	}
	return out
}

func whyOf(rep kbuild.Report, name string) string {
	for _, r := range rep.Results {
		if r.Unit.Name == name {
			return strings.Join(r.Why, "; ")
		}
	}
	return ""
}

func (f *fixture) outputs() map[string][]byte {
	f.t.Helper()
	out := map[string][]byte{}
	ents, err := os.ReadDir(f.path("cuda/fatbin"))
	require.NoError(f.t, err)
	for _, e := range ents {
		out[e.Name()] = f.read("cuda/fatbin/" + e.Name())
	}
	return out
}
