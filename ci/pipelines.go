package ci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"dagger.io/dagger"

	"github.com/cuzk-dev/cuzk/ci/oci"
	"github.com/cuzk-dev/cuzk/ci/release"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// Paths inside build containers.
const (
	Workdir      = "/src"
	GoPath       = "/go"
	GoModCache   = "/go/pkg/mod"
	GoBuildCache = "/root/.cache/go-build"
	KernelCache  = "/cache/cuzk"
	// containerPath puts the pinned Go first, then the CUDA image's nvcc.
	containerPath = GoRoot + "/bin:" + GoPath + "/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	// bundleDir is where the release step's archive is unpacked for the image.
	bundleDir = "/tmp/cuzk-bundle"
)

// SourceExclude leaves version control and build outputs out of the source
// mount, so containers build from sources alone (mirrors .gitignore).
var SourceExclude = []string{".git", "bin", "dist", ".gpu", "cuda/fatbin/*.fatbin", "cuda/fatbin/manifest.json", "**/*.test", "**/*.prof"}

// forwardedGoEnv are host variables passed through so the container reaches
// the same module proxy and checksum database as the host.
var forwardedGoEnv = []string{"GOPROXY", "GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GONOPROXY"}

// Options configure the pipelines. Root and Pins are required.
type Options struct {
	// Root is the repository root on the host (absolute or relative).
	Root string
	// Pins are the loaded toolchain pins (toolchain.LoadEnv).
	Pins toolchain.Pins
	// Platform is the container platform; default "linux/amd64".
	Platform string
	// Environ is the host environment: CUZK_* pin overrides and Go proxy
	// settings are forwarded from it; default os.Environ().
	Environ []string
	// Version and Epoch name and date a release (Release only; Epoch is
	// required there, see release.EpochFromGit).
	Version string
	Epoch   time.Time
	// Address, when set, is where Release publishes the image; otherwise
	// the image is exported as an OCI tarball into dist/.
	Address string
	// Log receives the engine's progress output; default discards.
	Log io.Writer
	// Logger receives pipeline events; default discards.
	Logger *slog.Logger
	// GoCommand is the host go command used to fetch the pinned Go; default "go".
	GoCommand string

	// Seams for tests: engine detection, connection, Go resolution.
	engineReady func(context.Context) bool
	connect     func(context.Context, io.Writer) (*dagger.Client, error)
	resolveGo   func(context.Context, GoToolchain) (string, error)
}

func (o Options) withDefaults() (Options, error) {
	if o.Root == "" {
		return o, errors.New("ci options: Root is required")
	}
	abs, err := filepath.Abs(o.Root)
	if err != nil {
		return o, fmt.Errorf("ci options: root: %w", err)
	}
	o.Root = abs
	if o.Pins.Images.Build == "" || o.Pins.Go == "" {
		return o, errors.New("ci options: Pins are required (toolchain.LoadEnv)")
	}
	if o.Platform == "" {
		o.Platform = "linux/amd64"
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.GoCommand == "" {
		o.GoCommand = "go"
	}
	return o, nil
}

// basePlan is what every pipeline shares: the pinned build image, the pinned
// Go, the source, the caches and the environment, and a first step that
// checks the Go version in the container.
func basePlan(name string, o Options) (Plan, error) {
	g, err := PinnedGo(o.Pins.Go, o.Platform)
	if err != nil {
		return Plan{}, err
	}
	env, err := containerEnv(o)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{
		Name: name, Image: o.Pins.Images.Build, Platform: o.Platform, Go: g, Workdir: Workdir,
		Source: Source{Host: o.Root, Exclude: SourceExclude},
		Env:    env,
		Caches: []Cache{
			{Key: "cuzk-go-mod", Path: GoModCache},
			{Key: "cuzk-go-build-" + g.GOVERSION() + "-" + g.OS + "-" + g.Arch, Path: GoBuildCache},
			{Key: "cuzk-kernels", Path: KernelCache},
		},
		Steps: []Step{{Why: "check the pinned Go", Args: []string{"sh", "-c",
			fmt.Sprintf(`v=$(go env GOVERSION) && [ "$v" = %q ] || { echo "go is $v, pinned %s" >&2; exit 1; }`, g.GOVERSION(), g.GOVERSION())}}},
	}
	return p, nil
}

// containerEnv returns the sorted container environment: the native
// toolchain mode with the image named (so kernel keys include its digest),
// Go's paths, and the host's CUZK_* pin overrides and Go proxy settings.
func containerEnv(o Options) ([]EnvVar, error) {
	env := map[string]string{
		toolchain.EnvToolchain: string(toolchain.Native),
		toolchain.EnvImage:     o.Pins.Images.Build,
		toolchain.EnvCache:     KernelCache,
		"GOPATH":               GoPath,
		"GOMODCACHE":           GoModCache,
		"GOCACHE":              GoBuildCache,
		"GOTOOLCHAIN":          "local",
		"GOFLAGS":              "-buildvcs=false",
		"PATH":                 containerPath,
	}
	for _, kv := range o.Environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		switch {
		case k == toolchain.EnvPinsFile:
			return nil, fmt.Errorf("ci: %s=%s is a host file the container cannot read; set the pins as CUZK_* variables instead", k, v)
		case k == toolchain.EnvToolchain || k == toolchain.EnvImage || k == toolchain.EnvCache:
			// set above for the container
		case strings.HasPrefix(k, "CUZK_"), contains(forwardedGoEnv, k):
			env[k] = v
		}
	}
	out := make([]EnvVar, 0, len(env))
	for k, v := range env {
		out = append(out, EnvVar{Name: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// mageStep runs a mage target in the container.
func mageStep(target, why string) Step {
	return Step{Why: why, Args: []string{"go", "run", "mage.go", target}}
}

// KernelsPlan builds the kernel fatbins inside the pinned build image and
// exports cuda/fatbin (fatbins and manifest) to the host tree.
func KernelsPlan(opts Options) (Plan, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return Plan{}, err
	}
	p, err := basePlan("kernels", o)
	if err != nil {
		return Plan{}, err
	}
	p.Steps = append(p.Steps, mageStep("kernels", "build fatbins with the image's nvcc"))
	p.Exports = []Export{{Path: "cuda/fatbin", Host: filepath.Join(o.Root, "cuda", "fatbin"), Dir: true}}
	return p, p.Validate()
}

// TestPlan runs `go run mage.go test` inside the pinned build image (GPU
// tests skip there: the container has no GPU).
func TestPlan(opts Options) (Plan, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return Plan{}, err
	}
	p, err := basePlan("test", o)
	if err != nil {
		return Plan{}, err
	}
	p.Steps = append(p.Steps, mageStep("test", "build kernels, run every test"))
	return p, p.Validate()
}

// ReleasePlan builds the release bundle inside the pinned build image
// (`go run mage.go release` with RELEASE_VERSION and SOURCE_DATE_EPOCH),
// exports dist/, and assembles the daemon image on the runtime base from the
// bundle's files.
func ReleasePlan(opts Options) (Plan, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return Plan{}, err
	}
	if o.Epoch.IsZero() {
		return Plan{}, errors.New("ci release: Epoch is required (release.EpochFromGit)")
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	p, err := basePlan("release", o)
	if err != nil {
		return Plan{}, err
	}
	p.Env = setEnv(p.Env, release.EnvVersion, o.Version)
	p.Env = setEnv(p.Env, release.EnvSourceDateEpoch, strconv.FormatInt(o.Epoch.Unix(), 10))
	goos, arch, _ := strings.Cut(o.Platform, "/")
	name := release.Options{Version: o.Version, GOOS: goos, GOARCH: arch}.Name()
	p.Steps = append(p.Steps,
		mageStep("release", "build the reproducible bundle and OCI layout into dist/"),
		Step{Why: "unpack the bundle for the image", Args: []string{"sh", "-c",
			fmt.Sprintf("rm -rf %[1]s && mkdir -p %[1]s && tar -xzf dist/%[2]s.tar.gz -C %[1]s", bundleDir, name)}})
	p.Exports = []Export{{Path: "dist", Host: filepath.Join(o.Root, "dist"), Dir: true}}
	im, err := imagePlan(o, name)
	if err != nil {
		return Plan{}, err
	}
	p.Publish = im
	return p, p.Validate()
}

// imagePlan lays the bundle's binaries and kernel manifest onto the runtime
// base, with the same environment, labels and entrypoint as the native
// payload layout (release.Bundle.Image).
func imagePlan(o Options, name string) (*ImagePlan, error) {
	base, err := oci.ParseReference(o.Pins.Images.Runtime)
	if err != nil {
		return nil, fmt.Errorf("ci release image: %w", err)
	}
	bins := release.Packages(o.Root)
	if len(bins) == 0 {
		return nil, fmt.Errorf("ci release image: none of %v exists under %s", release.DefaultPackages, o.Root)
	}
	im := &ImagePlan{Base: base.String(), Address: o.Address,
		Labels:      release.ImageLabels(o.Version),
		Annotations: map[string]string{oci.AnnotationBaseName: base.Name, oci.AnnotationBaseDigest: base.Digest}}
	im.Labels[oci.AnnotationBaseName], im.Labels[oci.AnnotationBaseDigest] = base.Name, base.Digest
	for _, kv := range release.ImageEnv {
		k, v, _ := strings.Cut(kv, "=")
		im.Env = append(im.Env, EnvVar{Name: k, Value: v})
	}
	root := path.Join(bundleDir, name)
	for _, pkg := range bins {
		b := path.Base(pkg)
		im.Files = append(im.Files, ImageFile{From: path.Join(root, "bin", b), To: path.Join(release.ImageBinDir, b), Mode: 0o755})
	}
	im.Files = append(im.Files, ImageFile{From: path.Join(root, release.KernelManifest),
		To: path.Join(release.ImageShareDir, strings.TrimPrefix(release.KernelManifest, "share/")), Mode: 0o644})
	im.Entrypoint = []string{path.Join(release.ImageBinDir, path.Base(bins[0]))}
	if o.Address == "" {
		im.Tarball = filepath.Join(o.Root, "dist", name+".oci.tar")
	}
	return im, nil
}

func setEnv(env []EnvVar, name, value string) []EnvVar {
	out := append([]EnvVar(nil), env...)
	for i := range out {
		if out[i].Name == name {
			out[i].Value = value
			return out
		}
	}
	out = append(out, EnvVar{Name: name, Value: value})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
