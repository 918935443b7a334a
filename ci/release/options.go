package release

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// DefaultPackages are the main packages a release carries, when present:
// the daemon, its client and the benchmarks.
var DefaultPackages = []string{"./daemon/cmd/cuzk-daemon", "./daemon/cmd/cuzk", "./bench/cmd/cuzk-bench"}

// Environment variables a release build reads (from the container plan or
// a release workflow).
const (
	// EnvSourceDateEpoch is the reproducible-builds.org variable for timestamps.
	EnvSourceDateEpoch = "SOURCE_DATE_EPOCH"
	// EnvVersion names the release ("v0.1.0"); not CUZK_*, because
	// toolchain rejects unknown CUZK_* variables.
	EnvVersion = "RELEASE_VERSION"
)

// Options steer Build. Zero fields take the defaults named on each.
type Options struct {
	// Root is the module root (the directory holding go.mod). Required.
	Root string
	// Packages are main packages relative to Root ("./daemon/cmd/x").
	// Default: those of DefaultPackages that exist under Root.
	Packages []string
	// OutDir receives the archive and SHA256SUMS. Required.
	OutDir string
	// Version names the bundle ("v0.1.0"); default "dev".
	Version string
	// Epoch stamps every archive entry and is exported as
	// SOURCE_DATE_EPOCH. Required: see ParseEpoch and EpochFromGit.
	Epoch time.Time
	// GOOS and GOARCH default to this machine's.
	GOOS, GOARCH string
	// NoCgo builds with CGO_ENABLED=0 (the daemon needs cgo to dlopen
	// libcuda, so the default is CGO_ENABLED=1).
	NoCgo bool
	// CC is the C compiler for cgo; default "gcc".
	CC string
	// Go is the go command; default "go".
	Go string
	// GoVersion, when set ("1.26.8"), must equal the go command's version.
	GoVersion string
	// Env is the base environment; default os.Environ(). The variables
	// PinnedEnv sets override it.
	Env []string
	// Extra files go into the bundle as they are (e.g. the kernel manifest
	// as "share/cuzk/manifest.json").
	Extra []Extra
	// Logger receives progress; default discards.
	Logger *slog.Logger
}

// Extra is a file copied into the bundle.
type Extra struct {
	// Src is the file on disk; Dst its slash path inside the bundle.
	Src, Dst string
}

func (o Options) withDefaults() (Options, error) {
	if o.Root == "" || o.OutDir == "" {
		return o, errors.New("release options: Root and OutDir are required")
	}
	if o.Epoch.IsZero() {
		return o, fmt.Errorf("release options: Epoch is required (set %s or use EpochFromGit)", EnvSourceDateEpoch)
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if strings.ContainsAny(o.Version, "/ \t\n") {
		return o, fmt.Errorf("release options: version %q may not contain '/' or spaces", o.Version)
	}
	if o.GOOS == "" {
		o.GOOS = runtime.GOOS
	}
	if o.GOARCH == "" {
		o.GOARCH = runtime.GOARCH
	}
	if o.CC == "" {
		o.CC = "gcc"
	}
	if o.Go == "" {
		o.Go = "go"
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if len(o.Packages) == 0 {
		o.Packages = Packages(o.Root)
	}
	if len(o.Packages) == 0 {
		return o, fmt.Errorf("release options: none of %v exists under %s", DefaultPackages, o.Root)
	}
	return o, checkNames(o.Packages)
}

// Packages returns those of DefaultPackages that exist under root.
func Packages(root string) []string {
	var out []string
	for _, p := range DefaultPackages {
		if st, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err == nil && st.IsDir() {
			out = append(out, p)
		}
	}
	return out
}

// KernelManifestExtra returns the Extra that puts the materialized kernel
// manifest (cuda/fatbin/manifest.json under root) into the bundle.
func KernelManifestExtra(root string) Extra {
	return Extra{Src: KernelManifestPath(root), Dst: KernelManifest}
}

// checkNames rejects two packages whose binaries would share a name.
func checkNames(pkgs []string) error {
	seen := map[string]string{}
	for _, p := range pkgs {
		name := path.Base(p)
		if prev, ok := seen[name]; ok {
			return fmt.Errorf("release options: %s and %s both build %q", prev, p, name)
		}
		seen[name] = p
	}
	return nil
}

// Name is the bundle's base name: cuzk-<version>-<goos>-<goarch>.
func (o Options) Name() string {
	return fmt.Sprintf("cuzk-%s-%s-%s", o.Version, o.GOOS, o.GOARCH)
}

// PinnedEnv returns the variables Build sets for `go build`, sorted by name.
// Everything that changes the output bytes is fixed here, so a stray GOFLAGS
// or CGO_CFLAGS in a developer's shell cannot leak into a release, and
// GOTOOLCHAIN=local keeps the go command from switching (or downloading)
// toolchains.
func (o Options) PinnedEnv() []string {
	cgo := "1"
	if o.NoCgo {
		cgo = "0"
	}
	return []string{
		"CC=" + o.CC,
		"CGO_CFLAGS=-O2 -g",
		"CGO_CPPFLAGS=",
		"CGO_CXXFLAGS=-O2 -g",
		"CGO_ENABLED=" + cgo,
		"CGO_LDFLAGS=-O2 -g",
		"GOAMD64=v1",
		"GOARCH=" + o.GOARCH,
		"GOARM64=v8.0",
		"GOEXPERIMENT=",
		"GOFLAGS=-mod=readonly",
		"GOOS=" + o.GOOS,
		"GOTOOLCHAIN=local",
		EnvSourceDateEpoch + "=" + strconv.FormatInt(o.Epoch.Unix(), 10),
	}
}

// BuildArgs returns the `go build` arguments for one package writing out.
func BuildArgs(out, pkg string) []string {
	return []string{"build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid=", "-o", out, pkg}
}

// ParseEpoch reads SOURCE_DATE_EPOCH (decimal seconds) from environ.
func ParseEpoch(environ []string) (time.Time, error) {
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, EnvSourceDateEpoch+"="); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n < 0 {
				return time.Time{}, fmt.Errorf("%s=%q: want non-negative decimal seconds", EnvSourceDateEpoch, v)
			}
			return time.Unix(n, 0).UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%s is not set", EnvSourceDateEpoch)
}
