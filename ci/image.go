package ci

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"github.com/cuzk-dev/cuzk/ci/buildimage"
	"github.com/cuzk-dev/cuzk/internal/renameio"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// ImageEpoch is the build image's SOURCE_DATE_EPOCH for a new lock
// (2024-12-04T00:00:00Z): fixed, so the image changes only with its packages.
const ImageEpoch = 1733270400

// DefaultImageSpec is what a first lock is resolved from: Debian 12 with
// contrib and non-free (nvcc), the pinned toolkit package, the gcc that links
// the cgo daemon, g++ (host emulation tests), libc6-dev, git,
// ca-certificates and protoc (the generated-code check).
func DefaultImageSpec(p toolchain.Pins) buildimage.Spec {
	return buildimage.Spec{
		Suite: "bookworm", Architecture: "amd64", Components: []string{"main", "contrib", "non-free"},
		Mirrors: []string{"http://deb.debian.org/debian", "http://deb.debian.org/debian-security"},
		Include: []string{p.CUDA.DebianPackage, "ca-certificates", "g++", "gcc", "git", "libc6-dev", "protobuf-compiler"},
		Epoch:   ImageEpoch,
	}
}

// LockPath is the lock file under root.
func LockPath(root string) string {
	return filepath.Join(root, filepath.FromSlash(buildimage.LockFile))
}

// LockImage resolves the build image's closure again (from the current
// lock's spec, or DefaultImageSpec when there is none), checks that it holds
// the pinned toolkit version, and writes the lock when it changed. It
// returns the lock and whether the file changed.
func LockImage(ctx context.Context, root string, p toolchain.Pins) (buildimage.Lock, bool, error) {
	path := LockPath(root)
	spec := DefaultImageSpec(p)
	old, err := buildimage.LoadLock(path)
	switch {
	case err == nil:
		spec = old.Spec()
	case !errors.Is(err, fs.ErrNotExist):
		return buildimage.Lock{}, false, err
	}
	l, err := buildimage.Resolve(ctx, spec)
	if err != nil {
		return buildimage.Lock{}, false, err
	}
	if err := CheckLock(l, p); err != nil {
		return buildimage.Lock{}, false, err
	}
	if old.ID() == l.ID() {
		return l, false, nil
	}
	return l, true, buildimage.WriteLock(path, l)
}

// CheckLock reports where a lock disagrees with the pins: the CUDA package
// must be locked at the pinned version.
func CheckLock(l buildimage.Lock, p toolchain.Pins) error {
	pkg, ok := l.Package(p.CUDA.DebianPackage)
	if !ok {
		return fmt.Errorf("build image lock: %s is not locked", p.CUDA.DebianPackage)
	}
	if pkg.Version != p.CUDA.DebianVersion {
		return fmt.Errorf("build image lock: %s is locked at %s, toolchain.yaml pins %s", pkg.Name, pkg.Version, p.CUDA.DebianVersion)
	}
	return nil
}

// ErrImageDigest reports a built image whose reference is not the one
// toolchain.yaml pins.
var ErrImageDigest = errors.New("build image digest differs from the pin")

// BuildImage returns the pinned build image for o.Root's lock (built, or
// from the cache) after checking that its reference equals images.build in
// the pins. With repin it writes the new reference into toolchain.yaml
// instead of failing (after a deliberate lock change).
func BuildImage(ctx context.Context, opts Options, repin bool) (buildimage.Result, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return buildimage.Result{}, err
	}
	l, err := buildimage.LoadLock(LockPath(o.Root))
	if err != nil {
		return buildimage.Result{}, fmt.Errorf("%w (run `go run mage.go image:lock`)", err)
	}
	if err := CheckLock(l, o.Pins); err != nil {
		return buildimage.Result{}, err
	}
	g, err := PinnedGo(o.Pins.Go, o.Platform)
	if err != nil {
		return buildimage.Result{}, err
	}
	cacheDir := o.ImageCache
	if cacheDir == "" {
		if cacheDir, err = buildimage.DefaultCacheDir(); err != nil {
			return buildimage.Result{}, err
		}
	}
	bo := buildimage.Options{Lock: l, DebDir: o.DebCache, CacheDir: cacheDir, Logger: o.Logger,
		Go: buildimage.GoToolchain{Module: g.Module(), ZipSHA256: g.ZipSHA256}}
	r, ok := buildimage.Cached(bo)
	if !ok {
		if bo.Go.Zip, err = ResolveGoZip(ctx, o.GoCommand, g); err != nil {
			return buildimage.Result{}, err
		}
		if r, err = buildimage.Build(ctx, bo); err != nil {
			return buildimage.Result{}, err
		}
	}
	if r.Ref == o.Pins.Images.Build {
		return r, nil
	}
	if !repin {
		return r, fmt.Errorf("%w: built %s, toolchain.yaml pins %s (after a deliberate lock change, run `CUZK_IMAGE_REPIN=1 go run mage.go image:build`)",
			ErrImageDigest, r.Ref, o.Pins.Images.Build)
	}
	return r, Repin(filepath.Join(o.Root, "toolchain", "toolchain.yaml"), r.Ref)
}

var buildPinRE = regexp.MustCompile(`(?m)^(  build: )"[^"]*"`)

// Repin rewrites images.build in the toolchain.yaml at path to ref.
func Repin(path, ref string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("repin: %w", err)
	}
	if len(buildPinRE.FindAllIndex(b, -1)) != 1 {
		return fmt.Errorf("repin: %s has no single `  build: \"...\"` line under images", path)
	}
	out := buildPinRE.ReplaceAll(b, []byte(`${1}"`+ref+`"`))
	return renameio.WriteFile(path, out, 0o644)
}
