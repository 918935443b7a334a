package ci

import (
	"context"
	"fmt"
	"os"

	"github.com/cuzk-dev/cuzk/ci/release"
	envmap "github.com/cuzk-dev/cuzk/internal/environ"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// EnvImageAddress names the registry reference Release publishes to (unset:
// the image is exported as an OCI tarball into dist/).
const EnvImageAddress = "RELEASE_IMAGE"

// The CUZK_* variables ci reads (the pins and the toolchain's choices are
// toolchain's, the cache directory toolchain/cas's).
const (
	// EnvVerify (1) rebuilds cache hits and fails on differing bytes.
	EnvVerify = "CUZK_VERIFY"
	// EnvDebugHash (1) prints every input line fed to every ActionID.
	EnvDebugHash = "CUZK_DEBUGHASH"
	// EnvKernelsReport names a file `mage kernels` writes its report into
	// (JSON: units, hits, nvcc runs, files and digests), which a pipeline
	// reads back instead of what the build printed.
	EnvKernelsReport = "CUZK_KERNELS_REPORT"
	// EnvSameReport names a file `mage ci:same` writes its runs into (JSON).
	EnvSameReport = "CUZK_SAME_REPORT"
	// EnvImageRepin (1) lets image:build write a changed image digest into
	// toolchain.yaml instead of failing (BuildImage's repin).
	EnvImageRepin = "CUZK_IMAGE_REPIN"
)

var (
	_ = envmap.Register(EnvVerify, "1: rebuild kernel cache hits and fail if the bytes differ")
	_ = envmap.Register(EnvDebugHash, "1: print every input line fed to every ActionID")
	_ = envmap.Register(EnvKernelsReport, "a file `go run mage.go kernels` writes its report into (JSON)")
	_ = envmap.Register(EnvSameReport, "a file `go run mage.go ci:same` writes its runs into (JSON)")
	_ = envmap.Register(EnvImageRepin, "1: image:build writes a changed image digest into toolchain.yaml instead of failing")
)

// OptionsFromEnv gathers Options for the mage targets from environ: the pins
// (toolchain.Load), RELEASE_VERSION, SOURCE_DATE_EPOCH (else the committer
// time of HEAD in root, else none; only Release needs it), RELEASE_COMMIT
// (else HEAD in root), and RELEASE_IMAGE. Progress goes to stderr.
func OptionsFromEnv(ctx context.Context, root string, environ []string) (Options, error) {
	pins, err := toolchain.Load(environ)
	if err != nil {
		return Options{}, err
	}
	o := Options{Root: root, Pins: pins, Environ: environ, Log: os.Stderr}
	env := envmap.Map(environ)
	o.Version = env[release.EnvVersion]
	o.Address = env[EnvImageAddress]
	o.Commit = env[release.EnvCommit]
	if o.Commit == "" {
		o.Commit = release.GitHead(ctx, root)
	}
	if _, ok := env[release.EnvSourceDateEpoch]; ok {
		if o.Epoch, err = release.ParseEpoch(environ); err != nil {
			return Options{}, fmt.Errorf("ci options: %w", err)
		}
	} else if t, err := release.EpochFromGit(ctx, root); err == nil {
		o.Epoch = t
	}
	return o, nil
}
