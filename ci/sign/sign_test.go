package sign_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/ci/sign"
	"github.com/cuzk-dev/cuzk/ci/sign/signtest"
)

const workflow = "https://github.com/cuzk-dev/cuzk/.github/workflows/release.yml@refs/tags/v0.1.0"

func keyPair(t *testing.T) (*sign.KeyPair, string) {
	t.Helper()
	kp, err := sign.GenerateKeyPair()
	require.NoError(t, err)
	pem, err := kp.PrivateKeyPEM()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "cuzk.key")
	require.NoError(t, os.WriteFile(path, pem, 0o600))
	return kp, path
}

func TestKeyRoundTrip(t *testing.T) {
	ctx := context.Background()
	kp, path := keyPair(t)
	loaded, err := sign.LoadKeyPair(path)
	require.NoError(t, err)
	s, err := sign.New(loaded)
	require.NoError(t, err)
	assert.False(t, s.Keyless())
	data := []byte("cuzk release archive")
	b, err := s.SignBlob(ctx, data)
	require.NoError(t, err)
	raw, err := sign.MarshalBundle(b)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"publicKey"`, "a key bundle names its key by hint")
	assert.Contains(t, string(raw), string(kp.GetHint()))

	pub, err := sign.ParsePublicKey(kp.PublicKeyPEM())
	require.NoError(t, err)
	v, err := sign.NewVerifier(sign.WithPublicKey(pub))
	require.NoError(t, err)
	_, err = v.VerifyBlob(raw, data)
	require.NoError(t, err)

	_, err = v.VerifyBlob(raw, []byte("cuzk release archivE"))
	assert.ErrorIs(t, err, sign.ErrBadSignature, "changed data")

	other, _ := keyPair(t)
	ov, err := sign.NewVerifier(sign.WithPublicKey(other.GetPublicKey()))
	require.NoError(t, err)
	_, err = ov.VerifyBlob(raw, data)
	assert.ErrorIs(t, err, sign.ErrBadSignature, "another key")

	_, err = v.VerifyBlob([]byte(`{"mediaType":"nonsense"}`), data)
	assert.ErrorIs(t, err, sign.ErrBadSignature, "a broken bundle")
}

func TestParseKeys(t *testing.T) {
	_, err := sign.ParsePrivateKey([]byte("not a key"))
	assert.Error(t, err)
	_, err = sign.ParsePublicKey([]byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"))
	assert.Error(t, err)
	_, err = sign.LoadKeyPair(filepath.Join(t.TempDir(), "absent.key"))
	assert.Error(t, err)
}

func TestVerifierOptionsValidate(t *testing.T) {
	kp, _ := keyPair(t)
	_, err := sign.NewVerifier()
	assert.Error(t, err, "neither key nor identity")
	_, err = sign.NewVerifier(sign.WithPublicKey(kp.GetPublicKey()), sign.WithIdentity(sign.Identity{Subject: "a", Issuer: "b"}))
	assert.Error(t, err, "both")
	_, err = sign.NewVerifier(sign.WithIdentity(sign.Identity{Subject: "a"}))
	assert.Error(t, err, "no issuer")
	_, err = sign.NewVerifier(sign.WithIdentity(sign.Identity{Subject: "a", SubjectRegexp: "a", Issuer: "b"}))
	assert.Error(t, err, "subject and its regexp")
	_, err = sign.NewVerifier(sign.WithIdentity(sign.Identity{Subject: "a", Issuer: "b"}))
	assert.Error(t, err, "no trusted root")
	_, err = sign.NewVerifier(sign.WithSCTs(-1))
	assert.Error(t, err)
}

func TestKeylessVirtualSigstore(t *testing.T) {
	ctx := context.Background()
	vs, err := signtest.New()
	require.NoError(t, err)
	s, err := vs.Signer(workflow, signtest.Issuer, sign.WithTrustedMaterial(vs.TrustedMaterial()))
	require.NoError(t, err)
	require.True(t, s.Keyless())
	id, err := s.Identity(ctx)
	require.NoError(t, err)
	assert.Equal(t, workflow, id)

	data := []byte("SHA256SUMS of a release")
	b, err := s.SignBlob(ctx, data)
	require.NoError(t, err)
	raw, err := sign.MarshalBundle(b)
	require.NoError(t, err)
	require.Len(t, b.GetVerificationMaterial().GetTlogEntries(), 1, "one Rekor entry")
	assert.NotNil(t, b.GetVerificationMaterial().GetCertificate(), "the certificate, not a key hint")

	good, err := vs.Verifier(workflow, signtest.Issuer)
	require.NoError(t, err)
	res, err := good.VerifyBlob(raw, data)
	require.NoError(t, err)
	assert.Equal(t, workflow, res.Signature.Certificate.SubjectAlternativeName)

	regex, err := sign.NewVerifier(sign.WithIdentity(sign.Identity{SubjectRegexp: `^https://github\.com/cuzk-dev/cuzk/\.github/workflows/release\.yml@refs/tags/v`,
		Issuer: signtest.Issuer}), sign.WithTrustedRoot(vs.TrustedMaterial()), sign.WithSCTs(0))
	require.NoError(t, err)
	_, err = regex.VerifyBlob(raw, data)
	require.NoError(t, err, "identity regexp")

	for name, v := range map[string]func() (*sign.Verifier, error){
		"wrong identity": func() (*sign.Verifier, error) {
			return vs.Verifier("https://github.com/evil/cuzk/.github/workflows/release.yml@refs/tags/v0.1.0", signtest.Issuer)
		},
		"wrong issuer": func() (*sign.Verifier, error) { return vs.Verifier(workflow, "https://accounts.google.com") },
		"SCT demanded": func() (*sign.Verifier, error) {
			return sign.NewVerifier(sign.WithIdentity(sign.Identity{Subject: workflow, Issuer: signtest.Issuer}), sign.WithTrustedRoot(vs.TrustedMaterial()))
		},
	} {
		t.Run(name, func(t *testing.T) {
			ver, err := v()
			require.NoError(t, err)
			_, err = ver.VerifyBlob(raw, data)
			assert.ErrorIs(t, err, sign.ErrBadSignature)
		})
	}
	_, err = good.VerifyBlob(raw, append([]byte{}, "SHA256SUMS of a releasE"...))
	assert.ErrorIs(t, err, sign.ErrBadSignature, "tampered data")

	other, err := signtest.New()
	require.NoError(t, err)
	ov, err := other.Verifier(workflow, signtest.Issuer)
	require.NoError(t, err)
	_, err = ov.VerifyBlob(raw, data)
	assert.ErrorIs(t, err, sign.ErrBadSignature, "another Sigstore's root")

	kp, _ := keyPair(t)
	kv, err := sign.NewVerifier(sign.WithPublicKey(kp.GetPublicKey()))
	require.NoError(t, err)
	_, err = kv.VerifyBlob(raw, data)
	assert.ErrorIs(t, err, sign.ErrBadSignature, "a key verifier refuses a certificate")
}

func TestStatementDSSE(t *testing.T) {
	ctx := context.Background()
	vs, err := signtest.New()
	require.NoError(t, err)
	s, err := vs.Signer(workflow, signtest.Issuer)
	require.NoError(t, err)
	archive := []byte("archive bytes")
	sum := sha256.Sum256(archive)
	st, err := json.Marshal(map[string]any{"_type": "https://in-toto.io/Statement/v1", "predicateType": "https://slsa.dev/provenance/v1",
		"subject":   []any{map[string]any{"name": "cuzk.tar.gz", "digest": map[string]string{"sha256": hex.EncodeToString(sum[:])}}},
		"predicate": map[string]any{"buildDefinition": map[string]any{"buildType": "x"}, "runDetails": map[string]any{"builder": map[string]any{"id": workflow}}}})
	require.NoError(t, err)
	b, err := s.SignStatement(ctx, st)
	require.NoError(t, err)
	raw, err := sign.MarshalBundle(b)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"dsseEnvelope"`)
	v, err := vs.Verifier(workflow, signtest.Issuer)
	require.NoError(t, err)
	payload, res, err := v.VerifyStatement(raw, sum[:])
	require.NoError(t, err)
	assert.Equal(t, st, payload)
	assert.Equal(t, "https://slsa.dev/provenance/v1", res.Statement.GetPredicateType())

	other := sha256.Sum256([]byte("another archive"))
	_, _, err = v.VerifyStatement(raw, other[:])
	assert.ErrorIs(t, err, sign.ErrBadSignature, "a digest the statement does not name")

	blob, err := s.SignBlob(ctx, st)
	require.NoError(t, err)
	rawBlob, err := sign.MarshalBundle(blob)
	require.NoError(t, err)
	_, _, err = v.VerifyStatement(rawBlob, sum[:])
	assert.ErrorIs(t, err, sign.ErrBadSignature, "a message signature is no DSSE statement")
}

func TestModeFromEnv(t *testing.T) {
	assert.Equal(t, sign.ModeNone, sign.ModeFromEnv(nil))
	assert.Equal(t, sign.ModeKey, sign.ModeFromEnv([]string{sign.EnvSigningKey + "=/k", sign.EnvIDToken + "=t"}), "the key wins")
	assert.Equal(t, sign.ModeKeyless, sign.ModeFromEnv([]string{sign.EnvIDToken + "=t"}))
	assert.Equal(t, sign.ModeKeyless, sign.ModeFromEnv([]string{sign.EnvGitHubTokenURL + "=https://x", sign.EnvGitHubToken + "=b"}))
	assert.Equal(t, sign.ModeNone, sign.ModeFromEnv([]string{sign.EnvGitHubTokenURL + "=https://x"}), "no bearer: no id-token permission")
	s, err := sign.FromEnv(nil, nil)
	require.NoError(t, err)
	assert.Nil(t, s)
	_, err = sign.FromEnv([]string{sign.EnvSigningKey + "=" + filepath.Join(t.TempDir(), "absent")}, nil)
	assert.ErrorContains(t, err, sign.EnvSigningKey)
}
