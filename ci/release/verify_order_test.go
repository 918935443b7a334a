package release

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/ci/sign"
)

// TestVerifySignaturesBeforeParsing: a forger who replaces a file with one
// that would not even parse, and rewrites SHA256SUMS to match (or replaces
// SHA256SUMS with garbage), gets "bad signature" naming SHA256SUMS's
// bundle: dist:verify checks that signature before it parses
// SHA256SUMS, the archive, the image or the SBOM.
func TestVerifySignaturesBeforeParsing(t *testing.T) {
	ctx := context.Background()
	signed := goodRelease(t)
	s, v, _ := keySigner(t)
	_, err := SignDist(ctx, signed, s, "")
	require.NoError(t, err)

	for name, damage := range map[string]func(dir string){
		"SBOM not JSON, sums regenerated": func(dir string) {
			require.NoError(t, os.WriteFile(only(t, dir, "*"+SBOMSuffix), []byte("not an SBOM"), 0o644))
			resum(t, dir)
		},
		"SBOM valid JSON of another meaning, sums regenerated": func(dir string) {
			editJSON(t, only(t, dir, "*"+SBOMSuffix), func(m map[string]any) { m["spdxVersion"] = "SPDX-2.2" })
			resum(t, dir)
		},
		"archive not gzip, sums regenerated": func(dir string) {
			require.NoError(t, os.WriteFile(only(t, dir, "*.tar.gz"), []byte("not an archive"), 0o644))
			resum(t, dir)
		},
		"SHA256SUMS not a list of sums": func(dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, SumsFile), []byte("garbage\n"), 0o644))
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dist")
			copyTree(t, signed, dir)
			damage(dir)
			_, err := VerifyRelease(dir, v, false)
			require.Error(t, err)
			t.Log(err)
			assert.ErrorIs(t, err, sign.ErrBadSignature, "a signature error, not a parse or meaning error")
			assert.ErrorContains(t, err, "verify "+SumsFile+sign.BundleSuffix+": signature of "+SumsFile+": ")
		})
	}

	// A file whose sum SHA256SUMS no longer matches fails on the sum, after
	// SHA256SUMS's signature and before any parsing.
	dir := filepath.Join(t.TempDir(), "dist")
	copyTree(t, signed, dir)
	require.NoError(t, os.WriteFile(only(t, dir, "*.tar.gz"), []byte("not an archive"), 0o644))
	_, err = VerifyRelease(dir, v, false)
	require.Error(t, err)
	assert.Regexp(t, `^verify cuzk-\S+\.tar\.gz: sha256 [0-9a-f]{64}, SHA256SUMS lists [0-9a-f]{64}$`, err.Error())
}

// TestRebuildChecksSignatures: dist:rebuild checks the signatures as
// dist:verify does, before it clones anything, and without a key, an
// identity or leave to skip them it refuses.
func TestRebuildChecksSignatures(t *testing.T) {
	ctx := context.Background()
	dir := goodRelease(t)
	s, _, _ := keySigner(t)
	_, err := SignDist(ctx, dir, s, "")
	require.NoError(t, err)
	noRepo := filepath.Join(t.TempDir(), "no-repository") // reached only if the checks passed

	err = Rebuild(ctx, RebuildOptions{Dir: dir, Repo: noRepo})
	assert.ErrorIs(t, err, ErrNoPolicy)

	_, other, _ := keySigner(t)
	err = Rebuild(ctx, RebuildOptions{Dir: dir, Repo: noRepo, Verifier: other})
	assert.ErrorIs(t, err, sign.ErrBadSignature)
	assert.ErrorContains(t, err, "verify "+SumsFile+sign.BundleSuffix)

	unsigned := filepath.Join(t.TempDir(), "dist")
	copyTree(t, goodRelease(t), unsigned)
	_, v, _ := keySigner(t)
	err = Rebuild(ctx, RebuildOptions{Dir: unsigned, Repo: noRepo, Verifier: v})
	assert.ErrorIs(t, err, sign.ErrNoSignature)

	// Past the signatures (here skipped by leave), the rebuild goes on to
	// the clone, which fails on the missing repository.
	err = Rebuild(ctx, RebuildOptions{Dir: unsigned, Repo: noRepo, Unsigned: true})
	assert.ErrorContains(t, err, "git clone")
}
