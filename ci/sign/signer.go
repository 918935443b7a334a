package sign

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"sync"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	"github.com/sigstore/sigstore-go/pkg/root"
	sgsign "github.com/sigstore/sigstore-go/pkg/sign"
	"google.golang.org/protobuf/encoding/protojson"
)

// Names of what this package writes.
const (
	// BundleSuffix follows a file's name for its Sigstore bundle (cosign
	// sign-blob --bundle and GitHub attestations use the same suffix).
	BundleSuffix = ".sigstore.json"
	// InTotoPayloadType is the DSSE payload type of an in-toto statement.
	InTotoPayloadType = "application/vnd.in-toto+json"
)

// Signer signs blobs, in-toto statements and images into Sigstore bundles,
// with a long-lived key (New with a KeyPair and no certificate provider) or
// keyless (WithCertificateProvider: a short-lived certificate for the
// key, typically Fulcio's for an OIDC identity, and WithTransparency: a
// Rekor entry per signature). A keyless Signer asks for one certificate and
// signs everything with it. Its methods are safe for concurrent use (they
// sign one at a time: sigstore-go's Rekor client is not safe for concurrent
// use); it keeps no files.
type Signer struct {
	mu      sync.Mutex // serializes bundle
	kp      sgsign.Keypair
	certs   *onceCertificate
	tokenFn func(context.Context) (string, error)
	tlogs   []sgsign.Transparency
	trust   root.TrustedMaterial
}

// Option configures a Signer.
type Option func(*Signer) error

// WithCertificateProvider makes the Signer keyless: each bundle carries a
// certificate p issues for the key pair (Fulcio's, for the OIDC identity
// token returns). token is called once, at the first signature.
func WithCertificateProvider(p sgsign.CertificateProvider, token func(context.Context) (string, error)) Option {
	return func(s *Signer) error {
		if p == nil {
			return errors.New("sign: nil certificate provider")
		}
		if token == nil {
			token = func(context.Context) (string, error) { return "", nil }
		}
		s.certs, s.tokenFn = &onceCertificate{p: p}, token
		return nil
	}
}

// WithTransparency adds transparency logs (Rekor): every signature is
// entered in each, and the bundle carries the entries.
func WithTransparency(logs ...sgsign.Transparency) Option {
	return func(s *Signer) error {
		for _, l := range logs {
			if l == nil {
				return errors.New("sign: nil transparency log")
			}
		}
		s.tlogs = append(s.tlogs, logs...)
		return nil
	}
}

// WithTrustedMaterial verifies every bundle against tm right after signing.
func WithTrustedMaterial(tm root.TrustedMaterial) Option {
	return func(s *Signer) error { s.trust = tm; return nil }
}

// New returns a Signer for key pair kp.
func New(kp sgsign.Keypair, opts ...Option) (*Signer, error) {
	if kp == nil {
		return nil, errors.New("sign: nil key pair")
	}
	s := &Signer{kp: kp}
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, err
		}
	}
	if s.certs != nil && len(s.tlogs) == 0 {
		return nil, errors.New("sign: a keyless signer needs a transparency log (its entry dates the short-lived certificate)")
	}
	return s, nil
}

// Keyless reports whether bundles carry a certificate rather than a key hint.
func (s *Signer) Keyless() bool { return s.certs != nil }

// Identity is the subject (SAN: a URI or an email) of the certificate a
// keyless Signer signs with, asking for the certificate if need be; "" for
// a key.
func (s *Signer) Identity(ctx context.Context) (string, error) {
	if s.certs == nil {
		return "", nil
	}
	der, err := s.certificate(ctx)
	if err != nil {
		return "", err
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return "", fmt.Errorf("sign: certificate: %w", err)
	}
	sum, err := certificate.SummarizeCertificate(c)
	if err != nil {
		return "", fmt.Errorf("sign: certificate: %w", err)
	}
	return sum.SubjectAlternativeName, nil
}

func (s *Signer) certificate(ctx context.Context) ([]byte, error) {
	return s.certs.get(ctx, s.kp, s.tokenFn)
}

// SignBlob signs data into a message-signature bundle (the form of `cosign
// sign-blob --new-bundle-format`).
func (s *Signer) SignBlob(ctx context.Context, data []byte) (*protobundle.Bundle, error) {
	return s.bundle(ctx, &sgsign.PlainData{Data: data})
}

// SignStatement signs an in-toto statement (JSON) into a bundle holding a
// DSSE envelope of type InTotoPayloadType.
func (s *Signer) SignStatement(ctx context.Context, statement []byte) (*protobundle.Bundle, error) {
	return s.bundle(ctx, &sgsign.DSSEData{Data: statement, PayloadType: InTotoPayloadType})
}

func (s *Signer) bundle(ctx context.Context, c sgsign.Content) (*protobundle.Bundle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	opts := sgsign.BundleOptions{Context: ctx, TransparencyLogs: s.tlogs, TrustedRoot: s.trust}
	if s.certs != nil {
		if _, err := s.certificate(ctx); err != nil {
			return nil, err
		}
		opts.CertificateProvider = s.certs
	}
	b, err := sgsign.Bundle(c, s.kp, opts)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return b, nil
}

// MarshalBundle encodes a bundle as the protobuf-specs JSON (.sigstore.json).
func MarshalBundle(b *protobundle.Bundle) ([]byte, error) {
	out, err := protojson.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("sign: encode bundle: %w", err)
	}
	return append(out, '\n'), nil
}

// onceCertificate asks its provider for one certificate and returns it for
// every later call: one release is signed under one certificate.
type onceCertificate struct {
	p   sgsign.CertificateProvider
	mu  sync.Mutex
	der []byte
}

func (o *onceCertificate) get(ctx context.Context, kp sgsign.Keypair, token func(context.Context) (string, error)) ([]byte, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.der != nil {
		return o.der, nil
	}
	tok, err := token(ctx)
	if err != nil {
		return nil, fmt.Errorf("sign: identity token: %w", err)
	}
	der, err := o.p.GetCertificate(ctx, kp, &sgsign.CertificateProviderOptions{IDToken: tok})
	if err != nil {
		return nil, fmt.Errorf("sign: certificate: %w", err)
	}
	o.der = der
	return der, nil
}

// GetCertificate returns the one certificate (sign.CertificateProvider).
func (o *onceCertificate) GetCertificate(ctx context.Context, kp sgsign.Keypair, opts *sgsign.CertificateProviderOptions) ([]byte, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.der == nil {
		return nil, errors.New("sign: no certificate yet")
	}
	return o.der, nil
}
