package release

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/ci/sign"
	"github.com/cuzk-dev/cuzk/ci/sign/signtest"
)

const testWorkflow = "https://github.com/cuzk-dev/cuzk/.github/workflows/release.yml@refs/tags/v0.0.1-test"

// keySigner returns a Signer for a fresh key and a verifier for it.
func keySigner(t *testing.T) (*sign.Signer, *sign.Verifier, string) {
	t.Helper()
	kp, err := sign.GenerateKeyPair()
	require.NoError(t, err)
	s, err := sign.New(kp)
	require.NoError(t, err)
	v, err := sign.NewVerifier(sign.WithPublicKey(kp.GetPublicKey()))
	require.NoError(t, err)
	pub := filepath.Join(t.TempDir(), "cuzk.pub")
	require.NoError(t, os.WriteFile(pub, kp.PublicKeyPEM(), 0o644))
	return s, v, pub
}

// signedPayload decodes the statement a DSSE bundle holds.
func signedPayload(t *testing.T, path string) map[string]any {
	t.Helper()
	var b struct {
		DSSE struct {
			Payload []byte `json:"payload"`
		} `json:"dsseEnvelope"`
	}
	require.NoError(t, json.Unmarshal(mustRead(t, path), &b))
	var st map[string]any
	require.NoError(t, json.Unmarshal(b.DSSE.Payload, &st))
	return st
}

func builderOf(st map[string]any) any {
	return st["predicate"].(map[string]any)["runDetails"].(map[string]any)["builder"].(map[string]any)["id"]
}

func TestSignDistWithKey(t *testing.T) {
	ctx := context.Background()
	dir := goodRelease(t)
	unsigned := filepath.Join(t.TempDir(), "unsigned")
	copyTree(t, dir, unsigned)
	s, v, pub := keySigner(t)
	signed, err := SignDist(ctx, dir, s, "")
	require.NoError(t, err)
	assert.Len(t, signed.Bundles, 4, "SHA256SUMS, archive, SBOM, provenance")
	assert.Equal(t, BuilderID, signed.Builder)
	assert.DirExists(t, filepath.Join(dir, ImageSignatureDir))

	got, err := VerifyRelease(dir, v, false)
	require.NoError(t, err)
	assert.Contains(t, got.Signer, "key ")
	st := signedPayload(t, only(t, dir, "*"+ProvenanceSuffix+sign.BundleSuffix))
	assert.Equal(t, BuilderID, builderOf(st))

	// dist:verify -key cosign.pub, through the policy.
	pv, err := SignaturePolicy{Key: pub}.Verifier()
	require.NoError(t, err)
	_, err = VerifyRelease(dir, pv, false)
	require.NoError(t, err)

	_, err = VerifyRelease(dir, nil, false)
	assert.ErrorIs(t, err, ErrNoPolicy, "no key, no identity, no -unsigned")
	_, err = VerifyRelease(dir, nil, true)
	assert.NoError(t, err, "-unsigned checks bytes and meaning only")

	_, other, _ := keySigner(t)
	_, err = VerifyRelease(dir, other, false)
	assert.ErrorIs(t, err, sign.ErrBadSignature)
	assert.ErrorContains(t, err, SumsFile+sign.BundleSuffix, "SHA256SUMS's signature is the first checked")

	_, err = VerifyRelease(unsigned, v, false)
	assert.ErrorIs(t, err, sign.ErrNoSignature)
	assert.ErrorContains(t, err, "is unsigned")

	// A signed release compares equal with an unsigned rebuild: the
	// signatures sit beside the reproducible files.
	require.NoError(t, CompareDirs(dir, unsigned))

	// Signing again replaces the signatures.
	_, err = SignDist(ctx, dir, s, "")
	require.NoError(t, err)
	_, err = VerifyRelease(dir, v, false)
	require.NoError(t, err)
}

func TestSignDistKeyless(t *testing.T) {
	ctx := context.Background()
	vs, err := signtest.New()
	require.NoError(t, err)
	s, err := vs.Signer(testWorkflow, signtest.Issuer)
	require.NoError(t, err)
	good := goodRelease(t)
	signed, err := SignDist(ctx, good, s, DefaultImageRepository)
	require.NoError(t, err)
	assert.Equal(t, testWorkflow, signed.Builder, "the builder is the certified workflow")
	st := signedPayload(t, only(t, good, "*"+ProvenanceSuffix+sign.BundleSuffix))
	assert.Equal(t, testWorkflow, builderOf(st))

	verifier := func(identity, issuer string) *sign.Verifier {
		v, err := vs.Verifier(identity, issuer)
		require.NoError(t, err)
		return v
	}
	v, err := VerifyRelease(good, verifier(testWorkflow, signtest.Issuer), false)
	require.NoError(t, err, "the right identity and issuer")
	assert.Equal(t, testWorkflow, v.Signer)

	for name, tc := range map[string]struct {
		damage   func(dir string)
		identity string
		issuer   string
		is       error
		names    string
	}{
		"wrong identity": {identity: "https://github.com/evil/cuzk/.github/workflows/release.yml@refs/tags/v0.0.1-test",
			issuer: signtest.Issuer, is: sign.ErrBadSignature, names: SumsFile + sign.BundleSuffix},
		"wrong issuer": {identity: testWorkflow, issuer: "https://accounts.google.com", is: sign.ErrBadSignature, names: sign.BundleSuffix},
		"tampered SBOM, sums regenerated": {damage: func(dir string) {
			rewrite(t, only(t, dir, "*"+SBOMSuffix), func(b []byte) []byte { return append(b, '\n') })
			resum(t, dir)
		}, is: sign.ErrBadSignature, names: SumsFile + sign.BundleSuffix},
		"tampered SBOM, sums kept": {damage: func(dir string) {
			rewrite(t, only(t, dir, "*"+SBOMSuffix), func(b []byte) []byte { return append(b, '\n') })
		}, names: "sha256"},
		"missing SHA256SUMS bundle": {damage: func(dir string) { remove(t, filepath.Join(dir, SumsFile+sign.BundleSuffix)) },
			is: sign.ErrNoSignature, names: SumsFile + sign.BundleSuffix},
		"missing archive bundle": {damage: func(dir string) { remove(t, only(t, dir, "*.tar.gz"+sign.BundleSuffix)) },
			is: sign.ErrNoSignature, names: ".tar.gz" + sign.BundleSuffix},
		"missing image signature": {damage: func(dir string) { require.NoError(t, os.RemoveAll(filepath.Join(dir, ImageSignatureDir))) },
			is: sign.ErrNoSignature, names: ImageSignatureDir},
		"bundles swapped": {damage: func(dir string) {
			a, b := only(t, dir, "*"+SBOMSuffix+sign.BundleSuffix), filepath.Join(dir, SumsFile+sign.BundleSuffix)
			x, y := mustRead(t, a), mustRead(t, b)
			require.NoError(t, os.WriteFile(a, y, 0o644))
			require.NoError(t, os.WriteFile(b, x, 0o644))
		}, is: sign.ErrBadSignature, names: SumsFile + sign.BundleSuffix},
		"provenance signed with another builder": {damage: func(dir string) {
			prov := only(t, dir, "*"+ProvenanceSuffix)
			stmt, err := SignedProvenance(mustRead(t, prov), "https://example.com/laptop")
			require.NoError(t, err)
			b, err := s.SignStatement(ctx, stmt)
			require.NoError(t, err)
			raw, err := sign.MarshalBundle(b)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(prov+sign.BundleSuffix, raw, 0o644))
		}, names: "builder.id"},
		"provenance bundle of another statement": {damage: func(dir string) {
			prov := only(t, dir, "*"+ProvenanceSuffix)
			var m map[string]any
			require.NoError(t, json.Unmarshal(signedStatementOf(t, prov+sign.BundleSuffix), &m))
			m["predicate"].(map[string]any)["buildDefinition"].(map[string]any)["buildType"] = "https://example.com/other"
			stmt, err := json.Marshal(m)
			require.NoError(t, err)
			b, err := s.SignStatement(ctx, stmt)
			require.NoError(t, err)
			raw, err := sign.MarshalBundle(b)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(prov+sign.BundleSuffix, raw, 0o644))
		}, names: "buildDefinition"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dist")
			copyTree(t, good, dir)
			if tc.damage != nil {
				tc.damage(dir)
			}
			id, iss := tc.identity, tc.issuer
			if id == "" {
				id, iss = testWorkflow, signtest.Issuer
			}
			_, err := VerifyRelease(dir, verifier(id, iss), false)
			require.Error(t, err)
			t.Log(err)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
			assert.ErrorContains(t, err, tc.names)
		})
	}
}

// signedStatementOf returns the DSSE payload of a bundle file.
func signedStatementOf(t *testing.T, path string) []byte {
	t.Helper()
	b, err := sign.ParseBundle(mustRead(t, path))
	require.NoError(t, err)
	return b.GetDsseEnvelope().GetPayload()
}

func TestVerifyRefusesStrayBundle(t *testing.T) {
	dir := goodRelease(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other.tar.gz"+sign.BundleSuffix), []byte("{}"), 0o644))
	_, err := Verify(dir)
	assert.ErrorContains(t, err, "other.tar.gz"+sign.BundleSuffix)
}

func TestSignaturePolicy(t *testing.T) {
	_, _, pub := keySigner(t)
	for name, p := range map[string]SignaturePolicy{
		"nothing":            {},
		"key and identity":   {Key: pub, Identity: testWorkflow, Issuer: signtest.Issuer},
		"unsigned and a key": {Key: pub, Unsigned: true},
		"absent key":         {Key: filepath.Join(t.TempDir(), "absent.pub")},
		"identity no issuer": {Identity: testWorkflow, TrustedRoot: filepath.Join(t.TempDir(), "absent.json")},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := p.Verifier()
			assert.Error(t, err)
		})
	}
	v, err := SignaturePolicy{Unsigned: true}.Verifier()
	require.NoError(t, err)
	assert.Nil(t, v)
	p := PolicyFromEnv([]string{EnvVerifyIdentity + "=" + testWorkflow, EnvVerifyIssuer + "=" + signtest.Issuer, EnvVerifyUnsigned + "=1",
		EnvVerifyKey + "=k", EnvVerifyTrustedRoot + "=r.json", EnvVerifyIdentityRegexp + "=x", EnvVerifyIssuerRegexp + "=y"})
	assert.Equal(t, SignaturePolicy{Key: "k", Identity: testWorkflow, IdentityRegexp: "x", Issuer: signtest.Issuer, IssuerRegexp: "y",
		TrustedRoot: "r.json", Unsigned: true}, p)
}

func TestSignedProvenance(t *testing.T) {
	dir := goodRelease(t)
	raw := mustRead(t, only(t, dir, "*"+ProvenanceSuffix))
	st, err := SignedProvenance(raw, testWorkflow)
	require.NoError(t, err)
	require.NoError(t, CheckSignedProvenance(st, raw, testWorkflow))
	assert.ErrorContains(t, CheckSignedProvenance(st, raw, BuilderID), "builder.id")
	same, err := SignedProvenance(raw, BuilderID)
	require.NoError(t, err)
	assert.Equal(t, string(raw), string(same), "with the file's builder the statement is the file")
	_, err = SignedProvenance(raw, "")
	assert.Error(t, err)
}

func TestCheckCertCommit(t *testing.T) {
	commit := testSource.Commit
	with := func(d string) *certificate.Summary {
		return &certificate.Summary{Extensions: certificate.Extensions{SourceRepositoryDigest: d}}
	}
	assert.NoError(t, checkCertCommit(with(""), commit), "no digest in the certificate (not GitHub)")
	assert.NoError(t, checkCertCommit(with(commit), commit))
	assert.NoError(t, checkCertCommit(with(commit), ""), "the provenance names no commit")
	assert.ErrorContains(t, checkCertCommit(with("0123456789012345678901234567890123456789"), commit), "source repository digest")
}
