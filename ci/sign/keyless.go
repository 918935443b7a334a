package sign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	sgsign "github.com/sigstore/sigstore-go/pkg/sign"

	envmap "github.com/cuzk-dev/cuzk/internal/environ"
)

// Sigstore's public-good instance and GitHub Actions' OIDC issuer.
const (
	PublicFulcio = "https://fulcio.sigstore.dev"
	PublicRekor  = "https://rekor.sigstore.dev"
	// GitHubIssuer is the OIDC issuer of GitHub Actions' identity tokens,
	// the certificate's issuer for a workflow's signatures.
	GitHubIssuer = "https://token.actions.githubusercontent.com"
)

// Environment variables FromEnv reads.
const (
	// EnvSigningKey names a PEM ECDSA P-256 private key file: set, release
	// files are signed with it (offline, no certificate, no log entry).
	EnvSigningKey = "CUZK_SIGNING_KEY"
	// EnvIDToken is an OIDC identity token for Fulcio, as cosign reads it.
	EnvIDToken = "SIGSTORE_ID_TOKEN"
	// EnvGitHubTokenURL and EnvGitHubToken are set by GitHub Actions in a
	// job with `permissions: id-token: write`.
	EnvGitHubTokenURL = "ACTIONS_ID_TOKEN_REQUEST_URL"
	EnvGitHubToken    = "ACTIONS_ID_TOKEN_REQUEST_TOKEN"
)

var _ = envmap.Register(EnvSigningKey, "a PEM ECDSA P-256 key file: release files are signed with it")

// Mode says how FromEnv signs.
type Mode string

// Signing modes.
const (
	ModeNone    Mode = ""        // unsigned
	ModeKey     Mode = "key"     // CUZK_SIGNING_KEY
	ModeKeyless Mode = "keyless" // Fulcio + Rekor with an OIDC token
)

// ModeFromEnv picks the mode environ asks for: a key when EnvSigningKey is
// set (it wins), keyless when an identity token can be had (EnvIDToken, or
// GitHub Actions' token request variables), else none.
func ModeFromEnv(environ []string) Mode {
	env := envmap.Map(environ)
	switch {
	case env[EnvSigningKey] != "":
		return ModeKey
	case env[EnvIDToken] != "", env[EnvGitHubTokenURL] != "" && env[EnvGitHubToken] != "":
		return ModeKeyless
	}
	return ModeNone
}

// FromEnv returns the Signer environ asks for (see ModeFromEnv), or nil
// for ModeNone. Keyless, it signs with a fresh key certified by Sigstore's
// public-good Fulcio for the OIDC identity and enters each signature in
// its Rekor; the token is fetched (audience "sigstore") at the first
// signature. client does the token request; nil means a 30 s default.
func FromEnv(environ []string, client *http.Client, opts ...Option) (*Signer, error) {
	env := envmap.Map(environ)
	switch ModeFromEnv(environ) {
	case ModeKey:
		kp, err := LoadKeyPair(env[EnvSigningKey])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvSigningKey, err)
		}
		return New(kp, opts...)
	case ModeKeyless:
		kp, err := GenerateKeyPair()
		if err != nil {
			return nil, err
		}
		token := func(context.Context) (string, error) { return env[EnvIDToken], nil }
		if env[EnvIDToken] == "" {
			token = func(ctx context.Context) (string, error) {
				return GitHubToken(ctx, client, env[EnvGitHubTokenURL], env[EnvGitHubToken], "sigstore")
			}
		}
		fulcio := sgsign.NewFulcio(&sgsign.FulcioOptions{BaseURL: PublicFulcio, Retries: 2})
		rekor := sgsign.NewRekor(&sgsign.RekorOptions{BaseURL: PublicRekor, Retries: 2})
		return New(kp, append([]Option{WithCertificateProvider(fulcio, token), WithTransparency(rekor)}, opts...)...)
	}
	return nil, nil
}

// GitHubToken asks GitHub Actions for an OIDC identity token for audience
// (requestURL and bearer from ACTIONS_ID_TOKEN_REQUEST_URL and _TOKEN).
func GitHubToken(ctx context.Context, client *http.Client, requestURL, bearer, audience string) (string, error) {
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	u, err := url.Parse(requestURL)
	if err != nil {
		return "", fmt.Errorf("github oidc: %s: %w", EnvGitHubTokenURL, err)
	}
	q := u.Query()
	q.Set("audience", audience)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("github oidc: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("github oidc: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("github oidc: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("github oidc: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	var out struct {
		Value string `json:"value"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Value == "" {
		return "", errors.New("github oidc: the response holds no token")
	}
	return out.Value, nil
}
