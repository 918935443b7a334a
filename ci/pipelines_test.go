package ci

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/ci/buildimage"
	"github.com/cuzk-dev/cuzk/ci/debian"
	"github.com/cuzk-dev/cuzk/ci/oci"
	"github.com/cuzk-dev/cuzk/toolchain"
)

var epoch = time.Unix(1_760_000_000, 0).UTC()

func testPins(t *testing.T) toolchain.Pins {
	t.Helper()
	p, err := toolchain.Load(nil)
	require.NoError(t, err)
	return p
}

// testRoot is a repository root holding the daemon's main package directory.
func testRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "daemon", "cmd", "cuzk-daemon"), 0o755))
	return root
}

func testOptions(t *testing.T) Options {
	return Options{Root: testRoot(t), Pins: testPins(t), Environ: []string{"HOME=/home/x"}, Epoch: epoch, Version: "v0.3.0",
		Commit: strings.Repeat("c", 40), DebCache: "/host/cache/cuzk-debs",
		HostCaches: HostCaches{GoMod: "/host/go/pkg/mod", Kernels: "/host/cache/cuzk", Dir: "/host/cache/cuzk-ci"}}
}

func TestBasePlanPinsEverything(t *testing.T) {
	o := testOptions(t)
	p, err := KernelsPlan(o)
	require.NoError(t, err)

	assert.Equal(t, o.Pins.Images.Build, p.Image)
	_, err = oci.ParseReference(p.Image)
	assert.NoError(t, err, "build image pinned by digest")
	assert.Equal(t, "linux/amd64", p.Platform)

	assert.Equal(t, o.Pins.Go, p.Go.Version)
	assert.Equal(t, "golang.org/toolchain@v0.0.1-go"+o.Pins.Go+".linux-amd64", p.Go.Module())
	assert.Regexp(t, regexp.MustCompile(`^[0-9a-f]{64}$`), p.Go.ZipSHA256)

	want := map[string]string{
		"CUZK_TOOLCHAIN": "native", "CUZK_IMAGE": o.Pins.Images.Build, "CUZK_CACHE": KernelCache,
		"GOTOOLCHAIN": "local", "GOMODCACHE": "/host/go/pkg/mod", "GOCACHE": GoBuildCache, "GOFLAGS": "-buildvcs=false",
		"GOPROXY": "off", "CUZK_KERNELS_REPORT": "/cuzk-out/kernels.json",
	}
	for k, v := range want {
		got, ok := p.LookupEnv(k)
		assert.True(t, ok, k)
		assert.Equal(t, v, got, k)
	}
	path, _ := p.LookupEnv("PATH")
	assert.True(t, strings.HasPrefix(path, GoRoot+"/bin:"), "pinned Go first on PATH: %s", path)
	assert.NotContains(t, path, "/usr/local/cuda", "the image's nvcc is Debian's, in /usr/bin")
	_, ok := p.LookupEnv("HOME")
	assert.False(t, ok, "host variables other than CUZK_* stay out")

	assert.Equal(t, []Cache{
		{Key: "cuzk-go-mod", Path: "/host/go/pkg/mod", Host: "/host/go/pkg/mod", Use: ReadOnly, Unread: GoModUnread},
		{Key: "cuzk-go-build-go" + o.Pins.Go + "-linux-amd64-b84142a9", Path: "/root/.cache/go-build", Host: "/host/cache/cuzk-ci/cuzk-go-build-go" + o.Pins.Go + "-linux-amd64-b84142a9", Use: Scratch},
		{Key: "cuzk-kernels", Path: "/cache/cuzk", Host: "/host/cache/cuzk", Use: Shared},
	}, p.Caches, "the module cache only goes in; the kernel cache goes in and out; the build cache only saves time")
	assert.Equal(t, OutDir, p.Out, "the steps' reports come back")
	other := o
	other.HostCaches.GoMod = "/home/dev/go/pkg/mod"
	q, err := KernelsPlan(other)
	require.NoError(t, err)
	assert.NotEqual(t, p.Caches[1].Key, q.Caches[1].Key, "another module cache path, another Go build cache")
	assert.Equal(t, Source{Host: o.Root, Exclude: SourceExclude}, p.Source)
	assert.Contains(t, p.Source.Exclude, ".git")
	assert.Equal(t, "/src", p.Workdir)

	require.Len(t, p.Steps, 2)
	assert.Equal(t, []string{"sh", "-c"}, p.Steps[0].Args[:2])
	assert.Contains(t, p.Steps[0].Args[2], `"go`+o.Pins.Go+`"`, "first step checks the Go version")
	assert.Equal(t, []string{"go", "run", "mage.go", "kernels"}, p.Steps[1].Args)
	assert.Equal(t, []Export{{Path: "cuda/fatbin", Host: filepath.Join(o.Root, "cuda", "fatbin"), Dir: true}}, p.Exports)
	assert.Empty(t, p.Push)
	assert.Empty(t, p.Mounts)
}

func TestTestPlan(t *testing.T) {
	p, err := TestPlan(testOptions(t))
	require.NoError(t, err)
	assert.Equal(t, "test", p.Name)
	assert.Equal(t, []string{"go", "run", "mage.go", "test"}, p.Steps[len(p.Steps)-1].Args)
	assert.Empty(t, p.Exports)
	debs, ok := p.LookupEnv("RELEASE_DEBS")
	assert.True(t, ok, "the release tests find the base .debs without a network")
	assert.Equal(t, DebsDir, debs)
	assert.Equal(t, []Mount{{Host: "/host/cache/cuzk-debs", Path: DebsDir}}, p.Mounts)
}

func TestEnvForwarding(t *testing.T) {
	o := testOptions(t)
	o.Environ = []string{"CUZK_ARCHS=sm_90", "CUZK_TOOLCHAIN=container", "CUZK_IMAGE=evil", "CUZK_CACHE=/host/cache",
		"GOPROXY=https://proxy.example", "GOFLAGS=-race", "PATH=/host/bin", "CUZK_DEBUGHASH=1", "CUZK_KERNELS_REPORT=/host/r.json"}
	p, err := KernelsPlan(o)
	require.NoError(t, err)
	for k, v := range map[string]string{"CUZK_ARCHS": "sm_90", "CUZK_TOOLCHAIN": "native", "CUZK_IMAGE": o.Pins.Images.Build,
		"CUZK_CACHE": KernelCache, "GOPROXY": "off", "GOFLAGS": "-buildvcs=false", "CUZK_DEBUGHASH": "1",
		"CUZK_KERNELS_REPORT": "/cuzk-out/kernels.json"} {
		got, _ := p.LookupEnv(k)
		assert.Equal(t, v, got, k)
	}
	path, _ := p.LookupEnv("PATH")
	assert.NotContains(t, path, "/host/bin")

	o.Environ = []string{"CUZK_PINS=/home/x/pins.yaml"}
	_, err = TestPlan(o)
	assert.ErrorContains(t, err, "CUZK_PINS")
}

func TestReleasePlan(t *testing.T) {
	o := testOptions(t)
	p, err := ReleasePlan(o)
	require.NoError(t, err)
	for k, want := range map[string]string{"RELEASE_VERSION": "v0.3.0", "SOURCE_DATE_EPOCH": "1760000000",
		"RELEASE_COMMIT": o.Commit, "RELEASE_DEBS": DebsDir} {
		got, _ := p.LookupEnv(k)
		assert.Equal(t, want, got, k)
	}
	require.Len(t, p.Steps, 2)
	assert.Equal(t, []string{"go", "run", "mage.go", "release"}, p.Steps[1].Args, "the same Go image assembly as natively")
	assert.Equal(t, []Mount{{Host: "/host/cache/cuzk-debs", Path: DebsDir}}, p.Mounts)
	assert.Equal(t, []Export{{Path: "dist", Host: filepath.Join(o.Root, "dist"), Dir: true, Wipe: true}}, p.Exports)
	assert.Empty(t, p.Push)

	o.Address = "ghcr.io/cuzk-dev/cuzk:v0.3.0"
	p, err = ReleasePlan(o)
	require.NoError(t, err)
	assert.Equal(t, o.Address, p.Push)
}

func TestReleasePlanErrors(t *testing.T) {
	tests := map[string]func(*Options){
		"no epoch":     func(o *Options) { o.Epoch = time.Time{} },
		"no daemon":    func(o *Options) { o.Root = t.TempDir() },
		"no root":      func(o *Options) { o.Root = "" },
		"no pins":      func(o *Options) { o.Pins = toolchain.Pins{} },
		"unpinned go":  func(o *Options) { o.Pins.Go = "1.19.1" },
		"bad platform": func(o *Options) { o.Platform = "amd64" },
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			o := testOptions(t)
			mutate(&o)
			_, err := ReleasePlan(o)
			assert.Error(t, err)
		})
	}
}

func TestPlanValidate(t *testing.T) {
	good, err := TestPlan(testOptions(t))
	require.NoError(t, err)
	require.NoError(t, good.Validate())
	tests := map[string]func(*Plan){
		"unpinned image": func(p *Plan) { p.Image = "nvidia/cuda:11.8.0-devel-ubuntu22.04" },
		"bad go sum":     func(p *Plan) { p.Go.ZipSHA256 = "abc" },
		"relative wd":    func(p *Plan) { p.Workdir = "src" },
		"no source":      func(p *Plan) { p.Source.Host = "" },
		"no steps":       func(p *Plan) { p.Steps = nil },
		"unsorted env":   func(p *Plan) { p.Env = append(p.Env, EnvVar{Name: "AAA"}) },
		"bad cache":      func(p *Plan) { p.Caches = append(p.Caches, Cache{Key: "k", Path: "rel"}) },
		"bad mount":      func(p *Plan) { p.Mounts = []Mount{{Host: "/x", Path: "debs"}} },
		"shared cache leaving files out": func(p *Plan) {
			p.Caches = append(p.Caches, Cache{Key: "k", Path: "/k", Host: "/h", Use: Shared, Unread: []string{"x"}})
		},
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			p := good
			p.Env = append([]EnvVar(nil), good.Env...)
			mutate(&p)
			assert.Error(t, p.Validate())
		})
	}
}

func TestPlanString(t *testing.T) {
	o := testOptions(t)
	o.Address = "ghcr.io/x/cuzk:v1"
	p, err := ReleasePlan(o)
	require.NoError(t, err)
	s := p.String()
	for _, want := range []string{
		"pipeline release\n", "from " + p.Image, "cache cuzk-go-mod at /host/go/pkg/mod (host /host/go/pkg/mod, read-only)",
		"cache cuzk-kernels at /cache/cuzk (host /host/cache/cuzk, shared)", "reports /cuzk-out -> the host", "env CUZK_TOOLCHAIN=native",
		"exec go run mage.go release", "export dist -> ", "mount /host/cache/cuzk-debs at /debs (read-only)",
		"push dist/image -> ghcr.io/x/cuzk:v1 (from the host)",
	} {
		assert.Contains(t, s, want)
	}
}

func TestPinnedGo(t *testing.T) {
	pins := testPins(t)
	g, err := PinnedGo(pins.Go, "linux/amd64")
	require.NoError(t, err, "toolchain.yaml's Go version needs a pinned checksum")
	assert.Equal(t, "go"+pins.Go, g.GOVERSION())
	_, err = PinnedGo(pins.Go, "linux/s390x")
	assert.ErrorContains(t, err, "goZipSHA256")
	_, err = PinnedGo("1.26.8", "linux")
	assert.Error(t, err)
}

func TestOptionsFromEnv(t *testing.T) {
	root := t.TempDir() // not a git repository: no epoch unless set
	o, err := OptionsFromEnv(context.Background(), root, []string{"RELEASE_VERSION=v1.0.0", "SOURCE_DATE_EPOCH=1700000000",
		"RELEASE_IMAGE=ghcr.io/cuzk-dev/cuzk:v1.0.0", "CUZK_ARCHS=sm_90"})
	require.NoError(t, err)
	assert.Equal(t, "v1.0.0", o.Version)
	assert.Equal(t, int64(1700000000), o.Epoch.Unix())
	assert.Equal(t, "ghcr.io/cuzk-dev/cuzk:v1.0.0", o.Address)
	assert.Equal(t, []string{"sm_90"}, o.Pins.Archs)

	o, err = OptionsFromEnv(context.Background(), root, nil)
	require.NoError(t, err)
	assert.True(t, o.Epoch.IsZero())
	_, err = ReleasePlan(o)
	assert.ErrorContains(t, err, "Epoch")

	_, err = OptionsFromEnv(context.Background(), root, []string{"SOURCE_DATE_EPOCH=soon"})
	assert.Error(t, err)
	_, err = OptionsFromEnv(context.Background(), root, []string{"CUZK_NOPE=1"})
	assert.Error(t, err, "unknown CUZK_* variables are rejected by the pins")
}

// TestBuildImagePinMatchesLock checks, without building, that the pinned
// build image is the one the committed lock names: its tag is the first
// digits of the image key of the lock and the pinned Go, and the lock holds
// the pinned toolkit. (image:build checks the digest itself.)
func TestBuildImagePinMatchesLock(t *testing.T) {
	pins := testPins(t)
	lock, err := buildimage.LoadLock(LockPath(".."))
	require.NoError(t, err)
	require.NoError(t, CheckLock(lock, pins))
	g, err := PinnedGo(pins.Go, "linux/amd64")
	require.NoError(t, err)
	key := buildimage.Key(lock, buildimage.GoToolchain{Module: g.Module(), ZipSHA256: g.ZipSHA256})
	assert.True(t, strings.HasPrefix(pins.Images.Build, buildimage.Repository+":"+key[:12]+"@sha256:"),
		"images.build %s is not the image of %s (key %s): run `CUZK_IMAGE_REPIN=1 go run mage.go image:build`", pins.Images.Build, buildimage.LockFile, key[:12])

	other := lock
	other.Packages = append([]debian.Package(nil), lock.Packages...)
	for i, p := range other.Packages {
		if p.Name == pins.CUDA.DebianPackage {
			other.Packages[i].Version = "12.0.0-1"
		}
	}
	assert.ErrorContains(t, CheckLock(other, pins), "toolchain.yaml pins "+pins.CUDA.DebianVersion)
}

func TestRepin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "toolchain.yaml")
	orig := "images:\n  build: \"old@sha256:00\"\n  runtime: \"r@sha256:11\"\n"
	require.NoError(t, os.WriteFile(path, []byte(orig), 0o644))
	require.NoError(t, Repin(path, "localhost/cuzk-build:abc@sha256:22"))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "images:\n  build: \"localhost/cuzk-build:abc@sha256:22\"\n  runtime: \"r@sha256:11\"\n", string(b))
	require.NoError(t, os.WriteFile(path, []byte("images: {}\n"), 0o644))
	assert.ErrorContains(t, Repin(path, "x"), "no single")
}
