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
