package sign_test

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/ci/sign"
	"github.com/cuzk-dev/cuzk/ci/sign/signtest"
)

const repo = "ghcr.io/cuzk-dev/cuzk"

func testImage(t *testing.T) (v1.Image, v1.Hash) {
	t.Helper()
	img, err := random.Image(256, 2)
	require.NoError(t, err)
	d, err := img.Digest()
	require.NoError(t, err)
	return img, d
}

func TestSimpleSigningPayloadIsCosigns(t *testing.T) {
	d := v1.Hash{Algorithm: "sha256", Hex: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
	p, err := sign.SimpleSigningPayload(repo, d)
	require.NoError(t, err)
	assert.Equal(t, `{"critical":{"identity":{"docker-reference":"ghcr.io/cuzk-dev/cuzk"},"image":{"docker-manifest-digest":"sha256:`+d.Hex+
		`"},"type":"cosign container image signature"},"optional":null}`, string(p))
	assert.Equal(t, "sha256-"+d.Hex+".sig", sign.SignatureTag(d))
}

func TestImageSignatureWithKey(t *testing.T) {
	ctx := context.Background()
	kp, _ := keyPair(t)
	s, err := sign.New(kp)
	require.NoError(t, err)
	img, d := testImage(t)
	sig, err := s.SignImage(ctx, repo, d)
	require.NoError(t, err)
	m, err := sig.Manifest()
	require.NoError(t, err)
	require.Len(t, m.Layers, 1)
	assert.Equal(t, sign.SimpleSigningMediaType, string(m.Layers[0].MediaType))
	assert.NotEmpty(t, m.Layers[0].Annotations[sign.AnnotationSignature])
	assert.NotContains(t, m.Layers[0].Annotations, sign.AnnotationCertificate, "a key signature carries no certificate")

	dir := filepath.Join(t.TempDir(), "image.sig")
	require.NoError(t, sign.WriteSignatureLayout(dir, sig, d))
	back, err := sign.ReadSignatureLayout(dir, d)
	require.NoError(t, err)

	v, err := sign.NewVerifier(sign.WithPublicKey(kp.GetPublicKey()))
	require.NoError(t, err)
	p, err := v.VerifyImage(back, d)
	require.NoError(t, err)
	assert.Equal(t, repo, p.Critical.Identity.DockerReference)

	// The manifest changes (a label): its digest is no longer the one signed.
	changed, err := mutate.Config(img, v1.Config{Labels: map[string]string{"x": "y"}})
	require.NoError(t, err)
	d2, err := changed.Digest()
	require.NoError(t, err)
	require.NotEqual(t, d, d2)
	_, err = v.VerifyImage(back, d2)
	assert.ErrorIs(t, err, sign.ErrBadSignature)
	_, err = sign.ReadSignatureLayout(dir, d2)
	assert.ErrorIs(t, err, sign.ErrNoSignature, "no signature is tagged for the new digest")
	_, err = sign.ReadSignatureLayout(filepath.Join(t.TempDir(), "absent"), d)
	assert.ErrorIs(t, err, sign.ErrNoSignature)
	assert.Error(t, sign.WriteSignatureLayout(dir, sig, d), "the layout is not empty")
}

func TestImageSignatureKeyless(t *testing.T) {
	ctx := context.Background()
	vs, err := signtest.New()
	require.NoError(t, err)
	s, err := vs.Signer(workflow, signtest.Issuer)
	require.NoError(t, err)
	_, d := testImage(t)
	sig, err := s.SignImage(ctx, repo, d)
	require.NoError(t, err)
	m, err := sig.Manifest()
	require.NoError(t, err)
	ann := m.Layers[0].Annotations
	assert.Contains(t, ann[sign.AnnotationCertificate], "BEGIN CERTIFICATE")
	var rb map[string]any
	require.NoError(t, json.Unmarshal([]byte(ann[sign.AnnotationBundle]), &rb), "cosign's Rekor bundle")
	assert.Contains(t, rb, "SignedEntryTimestamp")

	good, err := vs.Verifier(workflow, signtest.Issuer)
	require.NoError(t, err)
	_, err = good.VerifyImage(sig, d)
	require.NoError(t, err, "rebuilt from cosign's annotations alone")
	bad, err := vs.Verifier(workflow, "https://accounts.google.com")
	require.NoError(t, err)
	_, err = bad.VerifyImage(sig, d)
	assert.ErrorIs(t, err, sign.ErrBadSignature)
}

// TestPushSignature puts the signature where cosign looks: REPO:sha256-<hex>.sig
// on a registry (ggcr's in-memory one, on loopback).
func TestPushSignature(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := srv.Listener.Addr().String()
	kp, _ := keyPair(t)
	s, err := sign.New(kp)
	require.NoError(t, err)
	_, d := testImage(t)
	sig, err := s.SignImage(ctx, host+"/cuzk", d)
	require.NoError(t, err)
	tag, err := sign.PushSignature(ctx, sig, host+"/cuzk", d)
	require.NoError(t, err)
	assert.Equal(t, host+"/cuzk:sha256-"+d.Hex+".sig", tag.String())
	got, err := remote.Image(tag, remote.WithContext(ctx))
	require.NoError(t, err)
	v, err := sign.NewVerifier(sign.WithPublicKey(kp.GetPublicKey()))
	require.NoError(t, err)
	_, err = v.VerifyImage(got, d)
	require.NoError(t, err)
}

func TestGitHubToken(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer runner-token" || r.URL.Query().Get("audience") != "sigstore" {
			http.Error(w, "no", http.StatusForbidden)
			return
		}
		_, _ = w.Write([]byte(`{"value":"id-token"}`))
	}))
	defer srv.Close()
	ctx := context.Background()
	tok, err := sign.GitHubToken(ctx, srv.Client(), srv.URL+"/token?api-version=2.0", "runner-token", "sigstore")
	require.NoError(t, err)
	assert.Equal(t, "id-token", tok)
	_, err = sign.GitHubToken(ctx, srv.Client(), srv.URL+"/token", "wrong", "sigstore")
	assert.ErrorContains(t, err, "403")
}
