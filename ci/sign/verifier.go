package sign

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"
)

// Errors callers act on.
var (
	// ErrNoSignature: the signature (bundle, image signature) is absent.
	ErrNoSignature = errors.New("no signature")
	// ErrBadSignature: a signature is there and does not verify (wrong key
	// or identity, changed content, a broken bundle).
	ErrBadSignature = errors.New("bad signature")
)

// Identity is the certificate identity a keyless signature must carry, as
// cosign's --certificate-identity[-regexp] and
// --certificate-oidc-issuer[-regexp]: one of Subject and SubjectRegexp, and
// one of Issuer and IssuerRegexp.
type Identity struct {
	Subject, SubjectRegexp string
	Issuer, IssuerRegexp   string
}

func (id Identity) String() string {
	s, i := id.Subject, id.Issuer
	if s == "" {
		s = "~" + id.SubjectRegexp
	}
	if i == "" {
		i = "~" + id.IssuerRegexp
	}
	return s + " (issuer " + i + ")"
}

// Verifier checks bundles made by Signer against a public key or a
// certificate identity. It is safe for concurrent use and only reads.
type Verifier struct {
	v      *verify.Verifier
	policy verify.PolicyOption
	what   string // "key <hint>" or the identity, for errors
}

type verifierConfig struct {
	key      crypto.PublicKey
	identity *Identity
	trust    root.TrustedMaterial
	scts     int
}

// VerifierOption configures NewVerifier.
type VerifierOption func(*verifierConfig) error

// WithPublicKey verifies key signatures made with pub's private key.
func WithPublicKey(pub crypto.PublicKey) VerifierOption {
	return func(c *verifierConfig) error {
		if _, ok := pub.(*ecdsa.PublicKey); !ok {
			return fmt.Errorf("%w, have %T", ErrKeyType, pub)
		}
		c.key = pub
		return nil
	}
}

// WithIdentity verifies keyless signatures: a certificate chaining to the
// trusted material's Fulcio for identity, a transparency-log entry that
// dates it inside the certificate's validity.
func WithIdentity(id Identity) VerifierOption {
	return func(c *verifierConfig) error {
		if (id.Subject == "") == (id.SubjectRegexp == "") || (id.Issuer == "") == (id.IssuerRegexp == "") {
			return fmt.Errorf("sign: identity %s: give one of subject and subject regexp, and one of issuer and issuer regexp", id)
		}
		c.identity = &id
		return nil
	}
}

// WithTrustedRoot sets the trusted material for WithIdentity (Sigstore's
// public-good root from TUF: PublicGoodRoot; a test's virtual Sigstore).
func WithTrustedRoot(tm root.TrustedMaterial) VerifierOption {
	return func(c *verifierConfig) error { c.trust = tm; return nil }
}

// WithSCTs sets how many signed certificate timestamps a keyless
// certificate must embed (default 1, as Fulcio embeds; 0 for a test CA
// without a CT log).
func WithSCTs(n int) VerifierOption {
	return func(c *verifierConfig) error {
		if n < 0 {
			return fmt.Errorf("sign: %d SCTs", n)
		}
		c.scts = n
		return nil
	}
}

// PublicGoodRoot fetches Sigstore's public-good trusted root through TUF
// (sigstore-go's embedded root of trust, cached under ~/.sigstore).
func PublicGoodRoot() (root.TrustedMaterial, error) {
	tr, err := root.FetchTrustedRoot()
	if err != nil {
		return nil, fmt.Errorf("sign: sigstore trusted root: %w", err)
	}
	return tr, nil
}

// NewVerifier returns a Verifier for exactly one of WithPublicKey and
// WithIdentity (the latter with WithTrustedRoot).
func NewVerifier(opts ...VerifierOption) (*Verifier, error) {
	c := verifierConfig{scts: 1}
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	switch {
	case (c.key == nil) == (c.identity == nil):
		return nil, errors.New("sign: verify with a public key or a certificate identity (one of them)")
	case c.key != nil:
		sv, err := signature.LoadVerifier(c.key, crypto.SHA256)
		if err != nil {
			return nil, fmt.Errorf("sign: public key: %w", err)
		}
		hint, err := KeyHint(c.key)
		if err != nil {
			return nil, err
		}
		key := root.NewExpiringKey(sv, timeZero, timeZero)
		// Every hint maps to the one key: a bundle of another key fails on
		// its signature, named as such.
		tm := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) { return key, nil })
		v, err := verify.NewVerifier(tm, verify.WithNoObserverTimestamps())
		if err != nil {
			return nil, fmt.Errorf("sign: verifier: %w", err)
		}
		return &Verifier{v: v, policy: verify.WithKey(), what: "key " + hint}, nil
	}
	if c.trust == nil {
		return nil, errors.New("sign: a certificate identity needs a trusted root (WithTrustedRoot)")
	}
	id, err := verify.NewShortCertificateIdentity(c.identity.Issuer, c.identity.IssuerRegexp, c.identity.Subject, c.identity.SubjectRegexp)
	if err != nil {
		return nil, fmt.Errorf("sign: identity %s: %w", c.identity, err)
	}
	vopts := []verify.VerifierOption{verify.WithTransparencyLog(1), verify.WithIntegratedTimestamps(1)}
	if c.scts > 0 {
		vopts = append(vopts, verify.WithSignedCertificateTimestamps(c.scts))
	}
	v, err := verify.NewVerifier(c.trust, vopts...)
	if err != nil {
		return nil, fmt.Errorf("sign: verifier: %w", err)
	}
	return &Verifier{v: v, policy: verify.WithCertificateIdentity(id), what: c.identity.String()}, nil
}

// String names what the Verifier trusts.
func (v *Verifier) String() string { return v.what }

// ParseBundle decodes and validates a .sigstore.json bundle.
func ParseBundle(raw []byte) (*bundle.Bundle, error) {
	b := &bundle.Bundle{}
	if err := b.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("%w: bundle: %w", ErrBadSignature, err)
	}
	return b, nil
}

// VerifyBlob checks a message-signature bundle over data.
func (v *Verifier) VerifyBlob(bundleJSON, data []byte) (*verify.VerificationResult, error) {
	b, err := ParseBundle(bundleJSON)
	if err != nil {
		return nil, err
	}
	if b.GetMessageSignature() == nil {
		return nil, fmt.Errorf("%w: the bundle holds no message signature", ErrBadSignature)
	}
	return v.verify(b, verify.WithArtifact(bytes.NewReader(data)))
}

// VerifyStatement checks a DSSE bundle of an in-toto statement one of
// whose subjects has sha256 digest subjectSHA256 (hex), and returns the
// statement's bytes (the DSSE payload) and the verification result.
func (v *Verifier) VerifyStatement(bundleJSON []byte, subjectSHA256 []byte) ([]byte, *verify.VerificationResult, error) {
	b, err := ParseBundle(bundleJSON)
	if err != nil {
		return nil, nil, err
	}
	env := b.GetDsseEnvelope()
	if env == nil {
		return nil, nil, fmt.Errorf("%w: the bundle holds no DSSE envelope", ErrBadSignature)
	}
	if env.GetPayloadType() != InTotoPayloadType {
		return nil, nil, fmt.Errorf("%w: DSSE payload type %q, want %q", ErrBadSignature, env.GetPayloadType(), InTotoPayloadType)
	}
	res, err := v.verify(b, verify.WithArtifactDigest("sha256", subjectSHA256))
	if err != nil {
		return nil, nil, err
	}
	return env.GetPayload(), res, nil
}

func (v *Verifier) verify(b *bundle.Bundle, artifact verify.ArtifactPolicyOption) (*verify.VerificationResult, error) {
	res, err := v.v.Verify(b, verify.NewPolicy(artifact, v.policy))
	if err != nil {
		return nil, fmt.Errorf("%w for %s: %w", ErrBadSignature, v.what, err)
	}
	return res, nil
}

var timeZero time.Time
