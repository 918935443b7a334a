package release

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"

	"github.com/cuzk-dev/cuzk/ci/debian"
	"github.com/cuzk-dev/cuzk/ci/oci"
	"github.com/cuzk-dev/cuzk/ci/sign"
	"github.com/cuzk-dev/cuzk/internal/buildinfo"
	envmap "github.com/cuzk-dev/cuzk/internal/environ"
	"github.com/cuzk-dev/cuzk/internal/renameio"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// Environment variables Run reads besides SOURCE_DATE_EPOCH and
// RELEASE_VERSION (not CUZK_*: toolchain rejects unknown CUZK_* names).
const (
	// EnvCommit names the source commit when the tree has no .git (the
	// pinned build image gets the source without it).
	EnvCommit = "RELEASE_COMMIT"
	// EnvDebs is a directory that already holds the pinned .deb files:
	// set, Run never downloads (the build container has no Debian apt).
	EnvDebs = "RELEASE_DEBS"
	// EnvRepository is the source repository's URI for the SBOM and
	// provenance; default DefaultRepository.
	EnvRepository = "RELEASE_REPOSITORY"
)

// DefaultRepository is where cuzk's sources live.
const DefaultRepository = "https://github.com/cuzk-dev/cuzk"

// RunOptions steer Run.
type RunOptions struct {
	// Root is the module root; OutDir the release directory (dist/).
	Root, OutDir string
	// Pins are the loaded pins (toolchain.LoadEnv).
	Pins toolchain.Pins
	// Environ is the environment (os.Environ()): the variables above,
	// SOURCE_DATE_EPOCH and RELEASE_VERSION, and the build's base.
	Environ []string
	// Logger receives progress; default discards.
	Logger *slog.Logger
	// Signer, when set, signs the release once written (SignDist): a key
	// (CUZK_SIGNING_KEY) or keyless (sign.FromEnv). Nil leaves it unsigned.
	Signer *sign.Signer
	// ImageRepository is the repository the image signature names
	// (docker-reference); default DefaultImageRepository.
	ImageRepository string
}

// DefaultImageRepository is where release images are published.
const DefaultImageRepository = "ghcr.io/cuzk-dev/cuzk"

// Run is `go run mage.go release`: it resolves the epoch (SOURCE_DATE_EPOCH,
// else the commit time of HEAD), the version and the commit from the
// environment or git, fetches and unpacks the pinned base packages, empties
// OutDir (EmptyOutDir: no file of an earlier release survives) and writes
// the complete release with Make, the licence files in the bundle, then
// signs it when o.Signer is set (SignDist). Natively and inside the pinned
// build image it runs the same code on the same inputs, so it writes the
// same bytes where the C compiler is the same (signatures aside: they are
// beside the release files, never in them).
func Run(ctx context.Context, o RunOptions) (Dist, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	env := envmap.Map(o.Environ)
	epoch, err := ParseEpoch(o.Environ)
	if err != nil {
		if epoch, err = EpochFromGit(ctx, o.Root); err != nil {
			return Dist{}, fmt.Errorf("release: no %s and no git commit time: %w", EnvSourceDateEpoch, err)
		}
	}
	commit := env[EnvCommit]
	if commit == "" {
		commit = GitHead(ctx, o.Root) // "" outside git: recorded as unknown
	}
	repo := env[EnvRepository]
	if repo == "" {
		repo = DefaultRepository
	}
	fetch := debian.Fetcher{Dir: env[EnvDebs], Offline: env[EnvDebs] != "", Logger: o.Logger}
	if fetch.Dir == "" {
		if fetch.Dir, err = debian.DefaultCacheDir(); err != nil {
			return Dist{}, err
		}
	}
	pkgs := BasePackages(o.Pins)
	paths, err := fetch.Fetch(ctx, pkgs)
	if err != nil {
		return Dist{}, fmt.Errorf("release base: %w", err)
	}
	entries, err := debian.Rootfs(paths)
	if err != nil {
		return Dist{}, fmt.Errorf("release base: %w", err)
	}
	if err := EmptyOutDir(o.Root, o.OutDir); err != nil {
		return Dist{}, err
	}
	opts := Options{Root: o.Root, OutDir: o.OutDir, Version: env[EnvVersion], Epoch: epoch, GoVersion: o.Pins.Go,
		Env: o.Environ, Logger: o.Logger, Extra: append([]Extra{KernelManifestExtra(o.Root)}, LicenseExtras(o.Root)...)}
	d, err := Make(ctx, opts, Base{Packages: pkgs, Entries: entries}, Source{Commit: commit, Repository: repo, Pins: PinMap(o.Pins)})
	if err != nil || o.Signer == nil {
		return d, err
	}
	if _, err := SignDist(ctx, d.Dir, o.Signer, o.ImageRepository); err != nil {
		return d, err
	}
	return d, nil
}

// BasePackages converts the pinned base packages.
func BasePackages(p toolchain.Pins) []debian.Package {
	out := make([]debian.Package, len(p.BasePackages))
	for i, d := range p.BasePackages {
		out[i] = debian.Package{Name: d.Name, Version: d.Version, Arch: d.Arch, SHA256: d.SHA256, Path: d.Path}
	}
	return out
}

// PinMap returns the pins a release records in its provenance.
func PinMap(p toolchain.Pins) map[string]string {
	return map[string]string{
		"go": p.Go, "cuda.release": p.CUDA.Release, "cuda.nvcc_build": p.CUDA.NvccBuild,
		"cuda.host_compiler": p.CUDA.HostCompiler, "archs": strings.Join(p.Archs, ","), "ptx": strings.Join(p.PTX, ","),
		"flags": strings.Join(p.Flags, " "), "defines": strings.Join(p.Defines, " "),
		"images.build": p.Images.Build, "images.runtime": p.Images.Runtime,
	}
}

// GitHead returns HEAD's commit in root, or "" when root is not in git.
func GitHead(ctx context.Context, root string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		return "" // not a git checkout: the commit is unknown
	}
	return strings.TrimSpace(string(out))
}

// WorkStamp is the version stamp of a development build of the tree at
// root (`go run mage.go build`), so that its binaries name their commit as
// a release's do, whatever -buildvcs says: the version is RELEASE_VERSION
// from environ, else "dev", with "+modified" when tracked files have
// uncommitted changes; the commit is HEAD ("" outside git).
func WorkStamp(ctx context.Context, root string, environ []string) (buildinfo.Stamp, error) {
	s := buildinfo.Stamp{Version: envmap.Map(environ)[EnvVersion], Commit: GitHead(ctx, root)}
	if s.Version == "" {
		s.Version = "dev"
	}
	if s.Commit != "" {
		out, err := exec.CommandContext(ctx, "git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output()
		if err != nil {
			return s, fmt.Errorf("build stamp: git status: %w", err)
		}
		if len(strings.TrimSpace(string(out))) > 0 {
			s.Version += "+modified"
		}
	}
	return s, s.Validate()
}

// KernelManifestPath is the materialized kernel manifest under root.
func KernelManifestPath(root string) string {
	return filepath.Join(root, "cuda", "fatbin", "manifest.json")
}

// LicenseExtras returns the Extras that put the repository's licence files
// (LicenseFiles, at root) at the bundle's root.
func LicenseExtras(root string) []Extra {
	out := make([]Extra, len(LicenseFiles))
	for i, name := range LicenseFiles {
		out[i] = Extra{Src: filepath.Join(root, name), Dst: name}
	}
	return out
}

// EmptyOutDir removes everything inside out (creating it when absent), so
// that a release directory holds one release only. It refuses an out that
// is root or holds it, and one holding go.mod or .git: a mistyped OutDir
// must not delete sources.
func EmptyOutDir(root, out string) error {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("release: empty %s: %w", out, err)
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("release: empty %s: %w", out, err)
	}
	if rel, err := filepath.Rel(absOut, absRoot); err == nil && (rel == "." || !strings.HasPrefix(rel, "..")) {
		return fmt.Errorf("release: refusing to empty %s: it holds the module root %s", out, root)
	}
	for _, marker := range []string{"go.mod", ".git"} {
		if _, err := os.Lstat(filepath.Join(absOut, marker)); err == nil {
			return fmt.Errorf("release: refusing to empty %s: it holds %s", out, marker)
		}
	}
	entries, err := os.ReadDir(absOut)
	if errors.Is(err, fs.ErrNotExist) {
		return os.MkdirAll(absOut, 0o755)
	}
	if err != nil {
		return fmt.Errorf("release: empty %s: %w", out, err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(absOut, e.Name())); err != nil {
			return fmt.Errorf("release: empty %s: %w", out, err)
		}
	}
	return nil
}

// ImageSignatureDir is the OCI layout, beside the image's, holding the
// image's cosign signature manifest under the tag sha256-<hex>.sig. It is
// a layout of its own so that the image layout stays byte-reproducible
// (dist:rebuild compares it) while signatures differ on every run.
const ImageSignatureDir = "image.sig"

// Signed is what SignDist wrote.
type Signed struct {
	// Bundles are the .sigstore.json files written, sorted.
	Bundles []string
	// Builder is the builder id the signed provenance names.
	Builder string
	// Image is the image's signature manifest (in ImageSignatureDir) and
	// ImageDigest the image manifest digest it signs: push it beside the
	// image with sign.PushSignature.
	Image       v1.Image
	ImageDigest v1.Hash
}

// SignDist signs the release in dir (written by Make) with s: a Sigstore
// bundle <file>.sigstore.json for SHA256SUMS and every file it lists; for
// the provenance, a DSSE bundle of the statement whose builder id is the
// signer's identity (SignedProvenance); and the image, as cosign does,
// into ImageSignatureDir, naming repository repo. Signatures of an earlier
// run are removed first. Each file is written atomically.
func SignDist(ctx context.Context, dir string, s *sign.Signer, repo string) (Signed, error) {
	var out Signed
	if repo == "" {
		repo = DefaultImageRepository
	}
	listed, err := checkSums(dir)
	if err != nil {
		return out, fmt.Errorf("sign release: %w", err)
	}
	if err := removeSignatures(dir); err != nil {
		return out, err
	}
	if out.Builder = BuilderID; s.Keyless() {
		if out.Builder, err = s.Identity(ctx); err != nil {
			return out, fmt.Errorf("sign release: %w", err)
		}
	}
	for _, name := range append(slices.Sorted(maps.Keys(listed)), SumsFile) {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return out, fmt.Errorf("sign release: %w", err)
		}
		var b *protobundle.Bundle
		if strings.HasSuffix(name, ProvenanceSuffix) {
			stmt, err := SignedProvenance(data, out.Builder)
			if err != nil {
				return out, fmt.Errorf("sign %s: %w", name, err)
			}
			b, err = s.SignStatement(ctx, stmt)
		} else {
			b, err = s.SignBlob(ctx, data)
		}
		if err != nil {
			return out, fmt.Errorf("sign %s: %w", name, err)
		}
		raw, err := sign.MarshalBundle(b)
		if err != nil {
			return out, fmt.Errorf("sign %s: %w", name, err)
		}
		path := filepath.Join(dir, name+sign.BundleSuffix)
		if err := renameio.WriteFile(path, raw, 0o644); err != nil {
			return out, fmt.Errorf("sign %s: %w", name, err)
		}
		out.Bundles = append(out.Bundles, path)
	}
	c, err := oci.Verify(filepath.Join(dir, ImageDir))
	if err != nil {
		return out, fmt.Errorf("sign release image: %w", err)
	}
	out.ImageDigest = c.Descriptor.Digest
	if out.Image, err = s.SignImage(ctx, repo, out.ImageDigest); err != nil {
		return out, fmt.Errorf("sign release image: %w", err)
	}
	if err := sign.WriteSignatureLayout(filepath.Join(dir, ImageSignatureDir), out.Image, out.ImageDigest); err != nil {
		return out, fmt.Errorf("sign release image: %w", err)
	}
	return out, nil
}

// removeSignatures deletes dir's .sigstore.json files and ImageSignatureDir.
func removeSignatures(dir string) error {
	old, err := filepath.Glob(filepath.Join(dir, "*"+sign.BundleSuffix))
	if err != nil {
		return fmt.Errorf("sign release: %w", err)
	}
	for _, p := range append(old, filepath.Join(dir, ImageSignatureDir)) {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("sign release: %w", err)
		}
	}
	return nil
}
