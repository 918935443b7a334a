package ci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"dagger.io/dagger"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/ci/buildimage"
	"github.com/cuzk-dev/cuzk/ci/debian"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// fakeEngine stands in for a Dagger engine: it records every GraphQL query
// and answers each with a made-up string at the query's leaf, which is what
// the client expects for ids, sync, export and publish. It lets the
// translation from Plan to Dagger calls run without a container runtime.
type fakeEngine struct {
	mu      sync.Mutex
	queries []string
	// fail, when set, may answer a query with a GraphQL error instead (its
	// "message" and "extensions").
	fail func(query string) map[string]any
}

func (f *fakeEngine) Do(r *http.Request) (*http.Response, error) {
	var req struct{ Query string }
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.queries = append(f.queries, req.Query)
	n := len(f.queries)
	var gqlErr map[string]any
	if f.fail != nil {
		gqlErr = f.fail(req.Query)
	}
	f.mu.Unlock()
	if gqlErr != nil {
		body, err := json.Marshal(map[string]any{"data": nil, "errors": []any{gqlErr}})
		if err != nil {
			return nil, err
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
	}
	fields := selection(req.Query)
	var v any = fmt.Sprintf("fake-%s-%d", fields[len(fields)-1], n)
	for i := len(fields) - 2; i >= 0; i-- {
		v = map[string]any{fields[i]: v}
	}
	body, err := json.Marshal(map[string]any{"data": v})
	if err != nil {
		return nil, err
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
}

func (f *fakeEngine) Host() string { return "fake-engine" }
func (f *fakeEngine) Close() error { return nil }

// selection returns the chain of field names of a single-path GraphQL query
// ("query Query {a(x:1){b{c}}}" gives a, b, c), skipping arguments, string
// literals and inline fragments' type conditions ("... on Container").
func selection(q string) []string {
	var fields []string
	var ident strings.Builder
	depth, inStr, esc, prev := 0, false, false, ""
	for _, r := range q {
		switch {
		case inStr:
			inStr = esc || r != '"'
			esc = !esc && r == '\\'
		case r == '"':
			inStr = true
		case r == '(':
			depth++
		case r == ')':
			depth--
		case depth > 0:
		case r == ' ':
			prev = ident.String()
			ident.Reset()
		case r == '{', r == '}':
			if ident.Len() > 0 && prev != "on" {
				fields = append(fields, ident.String())
			}
			ident.Reset()
			prev = ""
		default:
			ident.WriteRune(r)
		}
	}
	return fields // "query Query " ends in a space, so the operation name is not a field
}

// hasCall reports whether q calls field with at least the given arguments
// (each "name:value", matched regardless of order).
func hasCall(q, field string, args ...string) bool {
	for rest := q; ; {
		i := strings.Index(rest, field+"(")
		if i < 0 {
			return false
		}
		rest = rest[i+len(field)+1:]
		list := argList(rest)
		ok := true
		for _, a := range args {
			ok = ok && strings.Contains(list, a)
		}
		if ok {
			return true
		}
	}
}

// argList returns the text up to the ")" closing an argument list.
func argList(s string) string {
	depth, inStr, esc := 1, false, false
	for i, r := range s {
		switch {
		case inStr:
			inStr = esc || r != '"'
			esc = !esc && r == '\\'
		case r == '"':
			inStr = true
		case r == '(':
			depth++
		case r == ')':
			depth--
			if depth == 0 {
				return s[:i]
			}
		}
	}
	return s
}

func TestSelection(t *testing.T) {
	assert.Equal(t, []string{"cacheVolume", "id"}, selection(`query Query {cacheVolume(key:"k{(\"x"){id}}`))
	assert.Equal(t, []string{"a", "b", "c"}, selection(`query Query {a(x:{y:"}"}){b{c}}}`))
	assert.Equal(t, []string{"node", "file", "id"}, selection(`query Query {node(id:"x"){... on Container{file(path:"p"){id}}}}`))
	assert.True(t, hasCall(`{f(a:"x)", b:1){g}}`, "f", `b:1`, `a:"x)"`))
	assert.False(t, hasCall(`{f(a:1){g(b:2)}}`, "f", `b:2`))
}

// fakeImage is a build image whose layout is a small directory: enough for
// the archive Dagger imports.
func fakeImage(t *testing.T) buildimage.Result {
	dir := filepath.Join(t.TempDir(), "entry", "layout")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "index.json"), []byte("{}"), 0o644))
	h := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("c", 64)}
	return buildimage.Result{Layout: dir, Ref: buildimage.Repository + ":0123456789ab@" + h.String(), Digest: h, Config: h}
}

func fakeOptions(t *testing.T, f *fakeEngine) (Options, *bool) {
	o := testOptions(t)
	connected := false
	o.Executor = toolchain.Dagger
	o.ready = func(context.Context, toolchain.Executor) bool { return true }
	img := fakeImage(t)
	o.image = func(context.Context, Options) (buildimage.Result, error) { return img, nil }
	o.fetchDebs = func(context.Context, string, []debian.Package) error { return nil }
	o.download = func(context.Context, string, string, io.Writer) error { return nil }
	o.connect = func(ctx context.Context, _ io.Writer) (*dagger.Client, error) {
		connected = true
		return dagger.Connect(ctx, dagger.WithConn(f))
	}
	return o, &connected
}

func TestKernelsThroughEngine(t *testing.T) {
	f := &fakeEngine{}
	o, _ := fakeOptions(t, f)
	out, err := execute(context.Background(), o, KernelsPlan)
	require.NoError(t, err)
	defer out.remove()
	all := strings.Join(f.queries, "\n")

	assert.Contains(t, all, `image.tar"`, "the host's image archive is read")
	assert.Contains(t, all, `import(source:"fake-id-`, "the image is imported from cuzk's own OCI archive")
	assert.NotContains(t, all, "from(address:", "no registry holds the build image")
	assert.Contains(t, all, `platform:"linux/amd64"`)
	assert.True(t, hasCall(all, "directory", `path:"`+o.Root+`"`, `exclude:[".git","bin","dist"`))
	// The caches travel as their Use says: the module and kernel caches
	// are host directories (their content is an input of the steps), the
	// build cache an engine volume.
	assert.NotContains(t, all, `cacheVolume(key:"cuzk-go-mod")`)
	assert.NotContains(t, all, `cacheVolume(key:"cuzk-kernels")`)
	assert.True(t, hasCall(all, "directory", `path:"`+o.HostCaches.GoMod+`"`))
	assert.True(t, hasCall(all, "withMountedDirectory", `path:"`+o.HostCaches.GoMod+`"`, `source:"fake-id-`))
	assert.True(t, hasCall(all, "directory", `path:"`+o.HostCaches.Kernels+`"`))
	assert.True(t, hasCall(all, "withMountedDirectory", `path:"/cache/cuzk"`, `source:"fake-id-`))
	assert.True(t, hasCall(all, "withMountedCache", `path:"/root/.cache/go-build"`, `cache:"fake-id-`))
	assert.False(t, hasCall(all, "withMountedCache", `source:`), "the build cache is the engine's own: no host content in the steps' keys")
	assert.True(t, hasCall(all, "withMountedDirectory", `path:"/cuzk-out"`, `source:"fake-id-`), "an empty report directory")
	assert.True(t, hasCall(all, "withEnvVariable", `name:"GOPROXY"`, `value:"off"`), "offline, as podman's")
	assert.True(t, hasCall(all, "withEnvVariable", `name:"CUZK_IMAGE"`, `value:"`+o.Pins.Images.Build+`"`))
	assert.True(t, hasCall(all, "withEnvVariable", `name:"CUZK_TOOLCHAIN"`, `value:"native"`))
	assert.False(t, hasCall(all, "withMountedDirectory", `path:"/usr/local/go"`), "Go is in the image")
	assert.True(t, hasCall(all, "withMountedDirectory", `path:"/src"`, `source:"fake-id-`))
	assert.Contains(t, all, `withWorkdir(path:"/src")`)
	assert.Contains(t, all, `node(id:"fake-sync-`, "exports read the synced container")
	assert.True(t, hasCall(all, "withExec", `args:["go","run","mage.go","kernels"]`, `insecureRootCapabilities:true`),
		"nvcc may turn address randomization off")
	assert.Contains(t, all, `directory(path:"/src/cuda/fatbin"){export(path:"`+o.Root+`/cuda/fatbin")}`)
	assert.Contains(t, all, `directory(path:"/cuzk-out"){export(path:"`+out.dir+`")}`, "the reports come back")
	assert.True(t, hasCall(all, "diff", `other:"fake-id-`), "only what the steps added to the kernel cache")
	assert.Contains(t, all, `export(path:"`+o.HostCaches.Kernels+`")`, "goes back to the host's kernel cache")
	assert.NotContains(t, all, `export(path:"`+o.HostCaches.GoMod+`")`, "the module cache only goes in")

	_, err = Kernels(context.Background(), o)
	assert.ErrorIs(t, err, ErrNoReport, "a kernels step that wrote no report is a failure (the fake engine writes nothing)")

	// The host directories are taken in one at a time, each its own sync,
	// before the build container's; the module cache without what no step
	// reads.
	var taken []string
	var last string // the sync of the build container
	for _, q := range f.queries {
		if !strings.Contains(q, "{sync}") {
			continue
		}
		if strings.Contains(q, "withExec") {
			last = q
			break
		}
		taken = append(taken, q)
	}
	require.Len(t, taken, 3, "the source, the module cache and the kernel cache")
	assert.True(t, hasCall(taken[0], "directory", `path:"`+o.Root+`"`))
	assert.True(t, hasCall(taken[1], "directory", `path:"`+o.HostCaches.GoMod+`"`, `exclude:["**/*_test.go","**/testdata","cache/download/**/*.zip"`))
	assert.True(t, hasCall(taken[2], "directory", `path:"`+o.HostCaches.Kernels+`"`))
	assert.False(t, hasCall(taken[2], "directory", `exclude:`), "the kernel cache comes back whole: nothing left out")
	assert.NotContains(t, last, `host{directory(`, "the steps mount what was taken in, not the host again")

	// Order: the Go check runs before the mage step, caches before execs.
	assert.Less(t, strings.Index(last, "withMountedCache"), strings.Index(last, "withExec"))
	require.Positive(t, strings.Index(last, `args:["sh","-c"`))
	assert.Less(t, strings.Index(last, `args:["sh","-c"`), strings.Index(last, `"mage.go","kernels"`))
}

func TestReleaseThroughEngine(t *testing.T) {
	f := &fakeEngine{}
	o, _ := fakeOptions(t, f)
	o.Address = "registry.example/cuzk:v0.3.0"
	var fetched, pushed []string
	o.fetchDebs = func(_ context.Context, dir string, pkgs []debian.Package) error {
		fetched = append(fetched, dir)
		assert.Len(t, pkgs, len(o.Pins.BasePackages))
		return nil
	}
	o.push = func(_ context.Context, layout, address string) (string, error) {
		pushed = append(pushed, layout, address)
		return "registry.example/cuzk@sha256:" + strings.Repeat("d", 64), nil
	}
	ref, err := Release(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, "registry.example/cuzk@sha256:"+strings.Repeat("d", 64), ref)
	assert.Equal(t, []string{o.DebCache}, fetched, "the host fetches the pinned packages first")
	assert.Equal(t, []string{filepath.Join(o.Root, "dist", "image"), o.Address}, pushed, "the exported layout is pushed")
	all := strings.Join(f.queries, "\n")
	assert.True(t, hasCall(all, "withExec", `args:["go","run","mage.go","release"]`))
	assert.True(t, hasCall(all, "withEnvVariable", `name:"RELEASE_VERSION"`, `value:"v0.3.0"`))
	assert.True(t, hasCall(all, "withEnvVariable", `name:"SOURCE_DATE_EPOCH"`, `value:"1760000000"`))
	assert.True(t, hasCall(all, "withEnvVariable", `name:"RELEASE_DEBS"`, `value:"/debs"`))
	assert.True(t, hasCall(all, "directory", `path:"/host/cache/cuzk-debs"`))
	assert.True(t, hasCall(all, "withMountedDirectory", `path:"/debs"`, `source:"fake-id-`))
	assert.Contains(t, all, `directory(path:"/src/dist"){export(`)
	assert.True(t, hasCall(all, "export", `path:"`+o.Root+`/dist"`, `wipe:true`), "dist/ holds exactly the exported release")
	assert.NotContains(t, all, "publish(", "the engine publishes nothing: the host pushes the layout it exported")
}

func TestReleaseWithoutAddressPushesNothing(t *testing.T) {
	f := &fakeEngine{}
	o, _ := fakeOptions(t, f)
	o.fetchDebs = func(context.Context, string, []debian.Package) error { return nil }
	o.push = func(context.Context, string, string) (string, error) {
		t.Fatal("pushed without an address")
		return "", nil
	}
	ref, err := Release(context.Background(), o)
	require.NoError(t, err)
	assert.Empty(t, ref)

	o.fetchDebs = func(context.Context, string, []debian.Package) error { return debian.ErrChecksum }
	_, err = Release(context.Background(), o)
	assert.ErrorIs(t, err, debian.ErrChecksum)
}

func TestNoEngine(t *testing.T) {
	f := &fakeEngine{}
	o, connected := fakeOptions(t, f)
	o.Executor = ""
	o.ready = func(context.Context, toolchain.Executor) bool { return false }
	for name, run := range map[string]func() error{
		"kernels": func() error { _, err := Kernels(context.Background(), o); return err },
		"test":    func() error { return Test(context.Background(), o) },
		"release": func() error {
			o := o
			o.fetchDebs = func(context.Context, string, []debian.Package) error { return nil }
			_, err := Release(context.Background(), o)
			return err
		},
	} {
		err := run()
		assert.ErrorIs(t, err, ErrNoExecutor, name)
		assert.ErrorContains(t, err, "pipeline "+name, name)
	}
	assert.False(t, *connected, "no connection attempt without an engine")
	assert.Empty(t, f.queries)
}

func TestExecutorChoice(t *testing.T) {
	o, _ := fakeOptions(t, &fakeEngine{})
	o.Executor = ""
	answers := map[toolchain.Executor]bool{toolchain.Podman: true, toolchain.Docker: true}
	o.ready = func(_ context.Context, e toolchain.Executor) bool { return answers[e] }
	e, err := o.chooseExecutor(context.Background())
	require.NoError(t, err)
	assert.Equal(t, toolchain.Podman, e, "no Dagger engine: podman before docker")

	o.Environ = append(o.Environ, toolchain.EnvExecutor+"=docker")
	e, err = o.chooseExecutor(context.Background())
	require.NoError(t, err)
	assert.Equal(t, toolchain.Docker, e, "CUZK_EXECUTOR picks")

	o.Environ = append(o.Environ, toolchain.EnvExecutor+"=dagger")
	_, err = o.chooseExecutor(context.Background())
	assert.ErrorIs(t, err, ErrNoExecutor, "a forced executor that does not answer is an error, not a fallback")
}

func TestEngineErrorsNameTheStep(t *testing.T) {
	o, _ := fakeOptions(t, &fakeEngine{})
	o.image = func(context.Context, Options) (buildimage.Result, error) {
		return buildimage.Result{}, fmt.Errorf("offline")
	}
	err := Test(context.Background(), o)
	assert.ErrorContains(t, err, "pipeline test: offline")
}

// kernelsWithFaults runs the kernels plan on a fake engine that answers
// with fail's errors; it returns the outcome, the sessions opened, the log
// and the run's error.
func kernelsWithFaults(t *testing.T, fail func(query string) map[string]any) (outcome, int, string, error) {
	o, _ := fakeOptions(t, &fakeEngine{fail: fail})
	var log bytes.Buffer
	o.Log = &log
	sessions := 0
	connect := o.connect
	o.connect = func(ctx context.Context, log io.Writer) (*dagger.Client, error) {
		sessions++
		return connect(ctx, log)
	}
	out, err := execute(context.Background(), o, KernelsPlan)
	return out, sessions, log.String(), err
}

// isBuildSync reports whether q syncs the build container (the steps run).
func isBuildSync(q string) bool {
	return strings.Contains(q, "withExec") && strings.Contains(q, "{sync}")
}

// An engine fault outside the steps is tried once more in a new session;
// a fault that stays is reported with both tries.
func TestEngineFaultIsTriedOnceMore(t *testing.T) {
	const fault = "failed to get snapshot: failed to snapshot: failed to sync: open /var/lib/dagger/x.go: too many open files"
	for _, faults := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d faults", faults), func(t *testing.T) {
			left := faults
			exported := false // the kernel cache's export, after the steps
			out, sessions, log, err := kernelsWithFaults(t, func(q string) map[string]any {
				exported = exported || strings.Contains(q, "export(") && strings.Contains(q, "diff(")
				if isBuildSync(q) && left > 0 {
					left--
					return map[string]any{"message": fault}
				}
				return nil
			})
			assert.Equal(t, 2, sessions, "a second session after the fault")
			assert.Contains(t, log, "pipeline kernels: the engine failed outside the steps")
			assert.Contains(t, log, "once more in a new session")
			if faults == 1 {
				require.NoError(t, err)
				out.remove()
				assert.True(t, exported, "the second try exports what the steps added")
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "tried twice")
			assert.Equal(t, 2, strings.Count(err.Error(), "too many open files"), "both tries' errors: %v", err)
			var step *StepError
			assert.False(t, errors.As(err, &step))
		})
	}
}

// A step's own failure is reported as it is, never tried again.
func TestStepFailureIsNotTriedAgain(t *testing.T) {
	_, sessions, log, err := kernelsWithFaults(t, func(q string) map[string]any {
		if isBuildSync(q) {
			return map[string]any{"message": "process \"go run mage.go kernels\" did not complete successfully: exit code: 1",
				"extensions": map[string]any{"_type": "EXEC_ERROR", "exitCode": 1, "cmd": []string{"go", "run", "mage.go", "kernels"},
					"stdout": "", "stderr": "kernels: nvcc failed"}}
		}
		return nil
	})
	var step *StepError
	require.ErrorAs(t, err, &step)
	assert.Equal(t, 1, step.Exit)
	assert.Contains(t, step.Stderr, "nvcc failed")
	assert.Equal(t, 1, sessions, "a step's failure is the build's, not the engine's")
	assert.NotContains(t, log, "once more")
}
