package ci

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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

	"github.com/cuzk-dev/cuzk/ci/buildimage"
	"github.com/cuzk-dev/cuzk/ci/debian"
	"github.com/cuzk-dev/cuzk/ci/release"
	"github.com/cuzk-dev/cuzk/toolchain"
	"github.com/cuzk-dev/cuzk/toolchain/cas"
)

// Paths inside build containers.
const (
	Workdir      = "/src"
	GoPath       = "/go"
	GoModCache   = "/go/pkg/mod"
	GoBuildCache = "/root/.cache/go-build"
	KernelCache  = "/cache/cuzk"
	// DebsDir is where the host's verified .deb files are mounted for the
	// release's base layer (containers run without a network).
	DebsDir = "/debs"
	// OutDir is the plans' Out: the steps' reports, brought back to the host.
	OutDir = "/cuzk-out"
	// KernelsReportFile is the kernels step's report in OutDir (KernelsReport).
	KernelsReportFile = "kernels.json"
	// containerPath puts the pinned Go first; Debian's nvcc is in /usr/bin.
	containerPath = GoRoot + "/bin:" + GoPath + "/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// SourceExclude leaves version control and build outputs out of the source
// mount, so containers build from sources alone (mirrors .gitignore).
var SourceExclude = []string{".git", "bin", "dist", ".gpu", "cuda/fatbin/*.fatbin", "cuda/fatbin/manifest.json", "**/*.test", "**/*.prof"}

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
	// Commit is the source commit a release records (the container gets
	// the source without .git).
	Commit string
	// DebCache is the host directory of the pinned .deb files (Release
	// only); default debian.DefaultCacheDir().
	DebCache string
	// ImageCache is where built build images are kept; default
	// buildimage.DefaultCacheDir().
	ImageCache string
	// HostCaches are the host directories the podman and docker executors
	// bind for the plan's caches; defaults from the host (see HostCaches).
	HostCaches HostCaches
	// Executor runs the plans; default the first that answers
	// (toolchain.ChooseExecutor, which honours CUZK_EXECUTOR).
	Executor toolchain.Executor
	// Address, when set, is where Release pushes the image from dist/image.
	Address string
	// Log receives a run's output: the host's `go mod download`, then the
	// executor's (a Dagger engine's progress, or the steps' output under
	// podman or docker); default discards.
	Log io.Writer
	// Logger receives pipeline events; default discards.
	Logger *slog.Logger
	// GoCommand is the host go command used to fetch the pinned Go; default "go".
	GoCommand string

	// Seams for tests: executor detection, connection, the build image, the
	// host's .deb fetch, the host's module download and the push.
	ready     func(context.Context, toolchain.Executor) bool
	connect   func(context.Context, io.Writer) (*dagger.Client, error)
	image     func(context.Context, Options) (buildimage.Result, error)
	fetchDebs func(context.Context, string, []debian.Package) error
	download  func(ctx context.Context, goCmd, root string, log io.Writer) error
	push      func(ctx context.Context, layout, address string) (string, error)
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
	if o.DebCache == "" {
		if o.DebCache, err = debian.DefaultCacheDir(); err != nil {
			return o, fmt.Errorf("ci options: %w", err)
		}
	}
	if o.HostCaches == (HostCaches{}) {
		if o.HostCaches, err = DefaultHostCaches(o.GoCommand, o.Environ); err != nil {
			return o, fmt.Errorf("ci options: %w", err)
		}
	}
	return o, nil
}

// HostCaches are the host directories behind a plan's caches for the
// podman and docker executors.
type HostCaches struct {
	// GoMod is the host's Go module cache: containers build offline from it.
	GoMod string
	// Kernels is the host's kernel cache (CUZK_CACHE, else ~/.cache/cuzk):
	// native and container builds have the same keys, so they share it.
	Kernels string
	// Dir holds the other caches, one directory per key.
	Dir string
}

// DefaultHostCaches returns the host's Go module cache, its kernel cache and
// ~/.cache/cuzk-ci.
func DefaultHostCaches(goCmd string, environ []string) (HostCaches, error) {
	mod, err := hostGoEnv(goCmd, "GOMODCACHE")
	if err != nil {
		return HostCaches{}, err
	}
	kernels := ""
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, cas.EnvDir+"="); ok {
			kernels = v
		}
	}
	user, err := os.UserCacheDir()
	if err != nil {
		return HostCaches{}, err
	}
	if kernels == "" {
		kernels = filepath.Join(user, "cuzk")
	}
	return HostCaches{GoMod: mod, Kernels: kernels, Dir: filepath.Join(user, "cuzk-ci")}, nil
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
	// The build cache is keyed by the module cache's path too: with
	// -trimpath, Go's cache keys leave that path out, yet an object whose
	// assembly includes a file from another directory holds it (see
	// goModCache), so an object cached under one path is wrong under another.
	modSum := sha256.Sum256([]byte(goModCache(o)))
	goBuild := "cuzk-go-build-" + g.GOVERSION() + "-" + g.OS + "-" + g.Arch + "-" + hex.EncodeToString(modSum[:4])
	p := Plan{
		Name: name, Image: o.Pins.Images.Build, Platform: o.Platform, Go: g, Workdir: Workdir,
		Source: Source{Host: o.Root, Exclude: SourceExclude},
		Env:    env,
		NoASLR: true, // every pipeline may compile kernels
		Out:    OutDir,
		Caches: []Cache{
			{Key: "cuzk-go-mod", Path: goModCache(o), Host: o.HostCaches.GoMod, Use: ReadOnly, Unread: GoModUnread},
			{Key: goBuild, Path: GoBuildCache, Host: filepath.Join(o.HostCaches.Dir, goBuild), Use: Scratch},
			{Key: "cuzk-kernels", Path: KernelCache, Host: o.HostCaches.Kernels, Use: Shared},
		},
		Steps: []Step{{Why: "check the pinned Go", Args: []string{"sh", "-c",
			fmt.Sprintf(`v=$(go env GOVERSION) && [ "$v" = %q ] || { echo "go is $v, pinned %s" >&2; exit 1; }`, g.GOVERSION(), g.GOVERSION())}}},
	}
	return p, nil
}

// containerEnv returns the sorted container environment: the native
// toolchain mode with the image named (so kernel keys include its digest),
// Go's paths, Go offline (GOPROXY=off: every module comes from the host's
// module cache, whichever executor runs the steps), and the host's CUZK_*
// pin overrides.
func containerEnv(o Options) ([]EnvVar, error) {
	env := map[string]string{
		toolchain.EnvToolchain: string(toolchain.Native),
		toolchain.EnvImage:     o.Pins.Images.Build,
		cas.EnvDir:             KernelCache,
		"GOPATH":               GoPath,
		"GOMODCACHE":           goModCache(o),
		"GOCACHE":              GoBuildCache,
		"GOTOOLCHAIN":          "local",
		"GOFLAGS":              "-buildvcs=false",
		"GOPROXY":              "off",
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
		case k == toolchain.EnvToolchain || k == toolchain.EnvImage || k == cas.EnvDir || k == EnvKernelsReport:
			// set above, or by the plan, for the container
		case k == EnvSameReport:
			// a host file
		case strings.HasPrefix(k, "CUZK_"):
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

// GoModUnread are the module cache's files no build reads: tests and test
// data of the modules (a build never compiles another module's tests),
// module zips (a module extracted beside its .ziphash is never read from
// its zip), version-control clones and checksum-database tiles (GOPROXY is
// off, and go.sum holds every sum). An engine that copies the cache in
// copies without them about 40 % fewer files and a third fewer bytes (a
// development machine's cache: 23,534 of 60,967 files, 0.55 of 1.51 GB).
var GoModUnread = []string{"**/*_test.go", "**/testdata", "cache/download/**/*.zip", "cache/vcs", "cache/download/sumdb"}

// goModCache is where the module cache is mounted in the container: at the
// host's own path when there is one. -trimpath does not rewrite the path of
// an assembly file that one package includes from another directory
// (gnark-crypto's field/asm files), so the module cache's path ends up in
// the binaries: mounted at the host's path, a container build of the daemon
// is byte-identical to the host's.
func goModCache(o Options) string {
	if o.HostCaches.GoMod != "" {
		return o.HostCaches.GoMod
	}
	return GoModCache
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
	p.Env = setEnv(p.Env, EnvKernelsReport, path.Join(p.Out, KernelsReportFile))
	p.Exports = []Export{{Path: "cuda/fatbin", Host: filepath.Join(o.Root, "cuda", "fatbin"), Dir: true}}
	return p, p.Validate()
}

// TestPlan runs `go run mage.go test` inside the pinned build image (GPU
// tests skip there: the container has no GPU), with the host's verified
// base .debs mounted at DebsDir as RELEASE_DEBS.
func TestPlan(opts Options) (Plan, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return Plan{}, err
	}
	p, err := basePlan("test", o)
	if err != nil {
		return Plan{}, err
	}
	// The release tests build the daemon image from the verified base .debs.
	p.Env = setEnv(p.Env, release.EnvDebs, DebsDir)
	p.Mounts = []Mount{{Host: o.DebCache, Path: DebsDir}}
	p.Steps = append(p.Steps, mageStep("test", "build kernels, run every test"))
	return p, p.Validate()
}

// ReleasePlan runs `go run mage.go release` inside the pinned build image
// (RELEASE_VERSION, SOURCE_DATE_EPOCH and RELEASE_COMMIT set, the host's
// verified .deb files mounted at DebsDir as RELEASE_DEBS, so nothing is
// downloaded there) and exports dist/. The image is assembled by the same
// Go code as natively (release.Run); Push names where the host pushes it.
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
	if len(release.Packages(o.Root)) == 0 {
		return Plan{}, fmt.Errorf("ci release: none of %v exists under %s", release.DefaultPackages, o.Root)
	}
	p, err := basePlan("release", o)
	if err != nil {
		return Plan{}, err
	}
	for k, v := range map[string]string{release.EnvVersion: o.Version, release.EnvCommit: o.Commit, release.EnvDebs: DebsDir,
		release.EnvSourceDateEpoch: strconv.FormatInt(o.Epoch.Unix(), 10)} {
		p.Env = setEnv(p.Env, k, v)
	}
	p.Mounts = []Mount{{Host: o.DebCache, Path: DebsDir}}
	p.Steps = append(p.Steps, mageStep("release", "build the bundle, image, SBOM and provenance into dist/"))
	// dist/ holds exactly one release (release:verify refuses stray files).
	p.Exports = []Export{{Path: "dist", Host: filepath.Join(o.Root, "dist"), Dir: true, Wipe: true}}
	p.Push = o.Address
	return p, p.Validate()
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
