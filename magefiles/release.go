//go:build mage

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/magefile/mage/mg"
	"github.com/magefile/mage/sh"

	"github.com/cuzk-dev/cuzk/ci"
	"github.com/cuzk-dev/cuzk/ci/oci"
	"github.com/cuzk-dev/cuzk/ci/release"
	"github.com/cuzk-dev/cuzk/ci/sign"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// Release empties dist/ and builds the reproducible release into it: tar.gz with LICENSE*, OCI image on the pinned Debian base, SPDX 2.3 SBOM, in-toto provenance, SHA256SUMS; signed when CUZK_SIGNING_KEY names a key (or keyless in GitHub Actions).
func Release(ctx context.Context) error {
	mg.CtxDeps(ctx, Kernels)
	pins, err := toolchain.LoadEnv()
	if err != nil {
		return err
	}
	signer, err := releaseSigner()
	if err != nil {
		return err
	}
	start := time.Now()
	tk := during("release: base packages, go build, image, SBOM, provenance")
	d, err := release.Run(ctx, release.RunOptions{Root: ".", OutDir: "dist", Pins: pins, Environ: os.Environ(), Signer: signer,
		ImageRepository: imageRepository(), Logger: tk.Logger("release")})
	tk.Stop()
	if err != nil {
		return err
	}
	fmt.Printf("release: %s (sha256 %s)\nrelease: image dist/%s, manifest %s\nrelease: %s, %s (%.1fs)\n", d.Bundle.Archive,
		d.Bundle.ArchiveSHA256, release.ImageDir, d.Image.Digest, d.SBOM, d.Provenance, time.Since(start).Seconds())
	if signer == nil {
		fmt.Printf("release: unsigned (set %s to a PEM ECDSA P-256 key to sign; see docs/release.md)\n", sign.EnvSigningKey)
	} else {
		fmt.Printf("release: signed (%s): *%s beside each file, the image's cosign signature in dist/%s\n", signingMode(), sign.BundleSuffix, release.ImageSignatureDir)
	}
	return nil
}

// signingKey is CUZK_SIGNING_KEY as mage started. init takes it out of the
// environment so that no child process (go build, nvcc, a container, a
// rebuild) sees it: ci forwards the host's CUZK_* variables into the build
// image, where the host's key file is not (docs/release.md).
var signingKey = os.Getenv(sign.EnvSigningKey)

func init() { _ = os.Unsetenv(sign.EnvSigningKey) } // cannot fail for a valid name

// signingEnviron is the environment sign.FromEnv reads: os.Environ() and the key.
func signingEnviron() []string {
	env := os.Environ()
	if signingKey != "" {
		env = append(env, sign.EnvSigningKey+"="+signingKey)
	}
	return env
}

func signingMode() sign.Mode { return sign.ModeFromEnv(signingEnviron()) }

// releaseSigner is the signer the environment asks for (nil: unsigned).
func releaseSigner() (*sign.Signer, error) { return sign.FromEnv(signingEnviron(), nil) }

// imageRepository is RELEASE_IMAGE's repository (the image signature's
// docker-reference and where dist:sign pushes it), else the default.
func imageRepository() string {
	if addr := os.Getenv(ci.EnvImageAddress); addr != "" {
		if ref, err := name.ParseReference(addr); err == nil {
			return ref.Context().Name()
		}
	}
	return release.DefaultImageRepository
}

// Dist targets check a release directory.
type Dist mg.Namespace

// Verify re-checks a release directory: signatures first (-key=cuzk.pub, or -identity= and -issuer= with Sigstore's root; -unsigned skips them), then bytes (SHA256SUMS, image blobs), then meaning (SBOM valid SPDX 2.3 and equal to the binaries' build info and kernel manifest, provenance commit fields consistent).
func (Dist) Verify(dir string, key, identity, identityRegexp, issuer, issuerRegexp, trustedRoot *string, unsigned *bool) error {
	sv, skip, err := verifyPolicy(key, identity, identityRegexp, issuer, issuerRegexp, trustedRoot, unsigned)
	if err != nil {
		return err
	}
	tk := during("dist:verify: " + dir)
	v, err := release.VerifyRelease(dir, sv, skip)
	tk.Stop()
	if err != nil {
		return err
	}
	fmt.Printf("dist:verify: %s ok: %s, image %s, commit %s, %d kernels; SBOM valid SPDX 2.3 and equal to the binaries' build info; %s\n",
		dir, v.Name, v.ImageDigest, v.Commit, len(v.Manifest.Kernels), signedBy(v, sv))
	return nil
}

// verifyPolicy is the signature policy of dist:verify's and dist:rebuild's
// flags over the RELEASE_VERIFY_* variables (a flag wins): the verifier,
// nil with skip true for -unsigned.
func verifyPolicy(key, identity, identityRegexp, issuer, issuerRegexp, trustedRoot *string, unsigned *bool) (sv *sign.Verifier, skip bool, err error) {
	p := release.PolicyFromEnv(os.Environ())
	for dst, src := range map[*string]*string{&p.Key: key, &p.Identity: identity, &p.IdentityRegexp: identityRegexp,
		&p.Issuer: issuer, &p.IssuerRegexp: issuerRegexp, &p.TrustedRoot: trustedRoot} {
		if src != nil {
			*dst = *src
		}
	}
	if unsigned != nil {
		p.Unsigned = *unsigned
	}
	sv, err = p.Verifier()
	return sv, p.Unsigned, err
}

// signedBy says who signed, or that the signatures were not checked.
func signedBy(v release.Verified, sv *sign.Verifier) string {
	if sv == nil {
		return "signatures NOT checked (-unsigned)"
	}
	return "signed by " + v.Signer + " (every file, the provenance as DSSE, the image)"
}

// Sign signs a release directory already built (as ci:release leaves dist/) with CUZK_SIGNING_KEY or keyless in GitHub Actions, and pushes the image signature beside RELEASE_IMAGE when set.
func (Dist) Sign(ctx context.Context, dir string) error {
	signer, err := releaseSigner()
	if err != nil {
		return err
	}
	if signer == nil {
		return fmt.Errorf("dist:sign: nothing to sign with: set %s to a PEM ECDSA P-256 private key, or run keyless in GitHub Actions (permissions: id-token: write) or with %s",
			sign.EnvSigningKey, sign.EnvIDToken)
	}
	if _, err := release.Verify(dir); err != nil {
		return err
	}
	repo := imageRepository()
	s, err := release.SignDist(ctx, dir, signer, repo)
	if err != nil {
		return err
	}
	fmt.Printf("dist:sign: %s signed (%s, builder %s): %d bundles, image %s in %s/%s\n", dir, signingMode(), s.Builder,
		len(s.Bundles), s.ImageDigest, dir, release.ImageSignatureDir)
	if os.Getenv(ci.EnvImageAddress) == "" {
		return nil
	}
	tag, err := sign.PushSignature(ctx, s.Image, repo, s.ImageDigest, remote.WithAuthFromKeychain(oci.Keychain))
	if err != nil {
		return err
	}
	fmt.Println("dist:sign: pushed", tag)
	return nil
}

// Keygen writes a new ECDSA P-256 signing key pair into dir: cuzk.key (0600, for CUZK_SIGNING_KEY; keep it off the repository) and cuzk.pub (for dist:verify -key).
func (Dist) Keygen(dir string) error {
	kp, err := sign.GenerateKeyPair()
	if err != nil {
		return err
	}
	priv, err := kp.PrivateKeyPEM()
	if err != nil {
		return err
	}
	keyPath, pubPath := filepath.Join(dir, "cuzk.key"), filepath.Join(dir, "cuzk.pub")
	for _, p := range []string{keyPath, pubPath} {
		if _, err := os.Stat(p); err == nil {
			return fmt.Errorf("dist:keygen: %s exists; not overwriting a key", p)
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(keyPath, priv, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(pubPath, kp.PublicKeyPEM(), 0o644); err != nil {
		return err
	}
	fmt.Printf("dist:keygen: %s (private: export %s=%s) and %s (public: dist:verify dist -key=%s)\n", keyPath, sign.EnvSigningKey, keyPath, pubPath, pubPath)
	return nil
}

// Rebuild checks a release directory as dist:verify does (signatures first: -key=, -identity= and -issuer=, or -unsigned), rebuilds it from the commit it names in a fresh clone, and compares every byte, naming the first file that differs.
func (Dist) Rebuild(ctx context.Context, dir string, key, identity, identityRegexp, issuer, issuerRegexp, trustedRoot *string, unsigned *bool) error {
	sv, skip, err := verifyPolicy(key, identity, identityRegexp, issuer, issuerRegexp, trustedRoot, unsigned)
	if err != nil {
		return err
	}
	// The rebuild signs nothing: its files are compared, its signatures would only differ.
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		for _, k := range []string{sign.EnvIDToken, sign.EnvGitHubTokenURL, sign.EnvGitHubToken} {
			if strings.HasPrefix(kv, k+"=") {
				return true
			}
		}
		return false
	})
	tk := during("dist:rebuild: " + dir)
	err = release.Rebuild(ctx, release.RebuildOptions{Dir: dir, Repo: ".", Env: env, Verifier: sv, Unsigned: skip, Log: tk.Writer()})
	tk.Stop()
	if err != nil {
		return err
	}
	checked := "signatures NOT checked (-unsigned)"
	if sv != nil {
		checked = "signatures checked against " + sv.String()
	}
	fmt.Printf("dist:rebuild: %s rebuilt byte for byte; %s\n", dir, checked)
	return nil
}

// Attach verifies a release directory and attaches SHA256SUMS, the archive, SBOM, provenance and their .sigstore.json signatures to the GitHub release RELEASE_VERSION (gh CLI).
func (Dist) Attach(ctx context.Context, dir string) error {
	assets, err := release.Assets(dir)
	if err != nil {
		return err
	}
	bundles, err := release.SignatureFiles(dir)
	if err != nil {
		return err
	}
	assets = append(assets, bundles...)
	tag := os.Getenv(release.EnvVersion)
	if tag == "" {
		return fmt.Errorf("dist:attach: %s is not set", release.EnvVersion)
	}
	return sh.RunV("gh", append([]string{"release", "create", tag, "--verify-tag", "--title", tag}, assets...)...)
}
