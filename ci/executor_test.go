package ci

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/ci/buildimage"
	"github.com/cuzk-dev/cuzk/ci/oci"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// stepImage builds the executor tests' image: the host's dash as /bin/sh
// (with the C library it loads; podman and docker run the steps through
// it) and testdata/stepper, statically linked, as /stepper.
func stepImage(t *testing.T) buildimage.Result {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "stepper")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./testdata/stepper")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	var entries []oci.Entry
	add := func(host, at string, mode os.FileMode) {
		real, err := filepath.EvalSymlinks(host)
		if errors.Is(err, os.ErrNotExist) {
			t.Skipf("the executor tests' image copies the host's %s: %v (a glibc x86-64 host with dash has it)", host, err)
		}
		require.NoError(t, err)
		b, err := os.ReadFile(real)
		require.NoError(t, err)
		entries = append(entries, oci.Entry{Path: at, Kind: oci.KindFile, Mode: mode, Data: b})
	}
	add(bin, "stepper", 0o755)
	add("/bin/dash", "bin/sh", 0o755)
	add("/lib/x86_64-linux-gnu/libc.so.6", "lib/x86_64-linux-gnu/libc.so.6", 0o755)
	add("/lib64/ld-linux-x86-64.so.2", "lib64/ld-linux-x86-64.so.2", 0o755)
	for _, d := range []string{"tmp", "src", "cuzk-out", "cache/k", "mod", "scratch", "etc"} {
		entries = append(entries, oci.Entry{Path: d, Kind: oci.KindDir, Mode: 0o755})
	}
	img, err := oci.Build(oci.Image{Layers: []oci.LayerSpec{{Entries: entries, CreatedBy: "executor test"}}, Cmd: []string{"/bin/sh"},
		Created: epoch, OS: "linux", Architecture: "amd64"})
	require.NoError(t, err)
	digest, err := img.Digest()
	require.NoError(t, err)
	config, err := img.ConfigName()
	require.NoError(t, err)
	layout := filepath.Join(dir, "image", "layout")
	tag := "localhost/cuzk-executor-test:" + digest.Hex[:12]
	_, err = oci.WriteLayout(layout, img, v1.Platform{OS: "linux", Architecture: "amd64"}, tag)
	require.NoError(t, err)
	return buildimage.Result{Layout: layout, Ref: tag + "@" + digest.String(), Digest: digest, Config: config}
}

// stepPlan is a plan of the stepper: one Shared cache at /cache/k, one
// ReadOnly at /mod, one Scratch at /scratch, the reports directory, and an
// export of result/.
func stepPlan(name string, src, k, mod, scratch, result string, steps ...Step) Plan {
	return Plan{Name: name, Platform: "linux/amd64", Workdir: Workdir, Source: Source{Host: src},
		Env: []EnvVar{{Name: "GOPROXY", Value: "off"}}, Out: OutDir,
		Caches: []Cache{{Key: "steptest-k", Path: "/cache/k", Host: k, Use: Shared}, {Key: "steptest-mod", Path: "/mod", Host: mod, Use: ReadOnly},
			{Key: "steptest-scratch", Path: "/scratch", Host: scratch, Use: Scratch}},
		Steps:   steps,
		Exports: []Export{{Path: "result", Host: result, Dir: true}}}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for n, c := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644))
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestExecutorsKeepOnePlan runs one plan through each real executor that
// answers here (a Dagger engine found through the variables a user sets,
// _EXPERIMENTAL_DAGGER_RUNNER_HOST, as engine.sh prints them; podman) and
// checks they mean the same by it: the report comes back as a file; the
// shared cache's content goes in and what the step adds comes out; the
// read-only cache goes in and nothing comes out; a failed step names itself
// with the end of its stderr. Through Dagger, an unchanged plan is served
// from the engine's cache, and its report says so and still holds.
func TestExecutorsKeepOnePlan(t *testing.T) {
	ctx := context.Background()
	for _, e := range []toolchain.Executor{toolchain.Podman, toolchain.Dagger} {
		t.Run(string(e), func(t *testing.T) {
			if !toolchain.ExecutorReady(ctx, e, os.Environ()) {
				how := "install podman and runc (go run mage.go testdeps)"
				if e == toolchain.Dagger {
					how = "start an engine: eval \"$(../shared/tools/dagger/engine.sh start)\" sets " + toolchain.EnvDaggerRunnerHost
				}
				t.Skipf("no %s executor answers here: %s", e, how)
			}
			img := stepImage(t)
			o := testOptions(t)
			o.Executor = e
			o.Environ = os.Environ()
			o.image = func(context.Context, Options) (buildimage.Result, error) { return img, nil }
			o.download = func(context.Context, string, string, io.Writer) error { return nil }
			o.Log = io.Discard // Dagger's progress display is for terminals
			src, k, mod, scratch, result := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
			writeFiles(t, src, map[string]string{"go.mod": "module x\n"})
			writeFiles(t, k, map[string]string{"seed.entry": "natively built"})
			writeFiles(t, mod, map[string]string{"m1": "module one", "m2": "module two"})
			runPlan := func(p Plan) (KernelsReport, error) {
				out, err := execute(ctx, o, func(Options) (Plan, error) { return p, nil })
				if err != nil {
					return KernelsReport{}, err
				}
				defer out.remove()
				return ReadKernelsReport(filepath.Join(out.dir, KernelsReportFile), out.began)
			}
			nonce := strings.ReplaceAll(t.Name(), "/", "-") + "-" + time.Now().Format("150405.000000000")
			p := stepPlan("steptest", src, k, mod, scratch, result, Step{Why: "read the caches, add to one, report", Args: []string{"/stepper", "run", nonce}})
			p.Image = img.Ref

			r, err := runPlan(p)
			require.NoError(t, err)
			assert.False(t, r.Cached, "a new input: the step ran")
			assert.Equal(t, "GOPROXY=off", r.Toolchain)
			assert.Equal(t, 1, r.Units, "the shared cache's host content went in")
			assert.Equal(t, []KernelOutcome{{Name: "seed.entry", Status: "hit local"}}, r.Kernels)
			modHashes, err := TreeHashes(mod)
			require.NoError(t, err)
			assert.Equal(t, modHashes, r.Files, "the read-only cache's host content went in")
			assert.ElementsMatch(t, []string{"seed.entry", nonce + ".entry"}, names(t, k), "what the step added came back; nothing was lost")
			assert.ElementsMatch(t, []string{"m1", "m2"}, names(t, mod), "nothing comes back to a read-only cache")
			b, err := os.ReadFile(filepath.Join(result, "out.txt"))
			require.NoError(t, err)
			assert.Equal(t, nonce, string(b), "the export came back")

			// Another shared cache content is another input: an empty one
			// is empty in the step (an engine volume would not be).
			empty := t.TempDir()
			cold := stepPlan("steptest", src, empty, mod, scratch, result, p.Steps...)
			cold.Image = img.Ref
			r, err = runPlan(cold)
			require.NoError(t, err)
			assert.Equal(t, 0, r.Units, "an empty kernel cache is empty in the step")
			assert.Equal(t, []string{nonce + ".entry"}, names(t, empty))

			if e == toolchain.Dagger {
				// The same inputs again: the engine serves the step from its
				// cache. Its report is the earlier one and says so, and what
				// it added to the shared cache still comes back.
				require.NoError(t, os.Remove(filepath.Join(k, nonce+".entry")))
				r, err = runPlan(p)
				require.NoError(t, err)
				assert.True(t, r.Cached, "unchanged inputs: served from the engine's cache (an engine short of "+
					"free disk prunes unused results every 20-30 s: docs/build-image.md, item 4)")
				assert.Equal(t, 1, r.Units)
				assert.ElementsMatch(t, []string{"seed.entry", nonce + ".entry"}, names(t, k))
			}

			failing := stepPlan("steptest", src, k, mod, scratch, result, p.Steps[0],
				Step{Why: "fail on purpose", Args: []string{"/stepper", "fail"}})
			failing.Image = img.Ref
			_, err = runPlan(failing)
			var se *StepError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, "fail on purpose", se.Step.Why, "the failed step names itself")
			assert.Equal(t, []string{"/stepper", "fail"}, se.Step.Args)
			assert.Equal(t, 7, se.Exit)
			assert.Contains(t, se.Stderr, "stderr line 29")
			assert.NotContains(t, se.Stderr, "stderr line 9\n", "only the end of stderr")
			assert.Contains(t, err.Error(), `pipeline steptest: step "fail on purpose" (/stepper fail) failed with exit code 7`)
		})
	}
}

// testWriter sends an executor's progress to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
