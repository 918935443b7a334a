// Package signtest runs keyless signing end to end without a network:
// sigstore-go's virtual Sigstore (testing/ca) issues the certificates and
// keeps the transparency log, and serves as the verifier's trusted root.
// The signer under test runs sigstore-go's real Rekor client code; only
// the HTTP round trip is replaced by an in-memory log.
package signtest

import (
	"context"
	"crypto"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/sigstore/rekor/pkg/generated/client/entries"
	"github.com/sigstore/rekor/pkg/generated/models"
	"github.com/sigstore/rekor/pkg/types"
	"github.com/sigstore/sigstore-go/pkg/root"
	sgsign "github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"

	"github.com/cuzk-dev/cuzk/ci/sign"
)

// Issuer is the OIDC issuer the tests' certificates name.
const Issuer = sign.GitHubIssuer

// Sigstore is a virtual Fulcio and Rekor. It is safe for concurrent use.
type Sigstore struct {
	VS *ca.VirtualSigstore
	mu sync.Mutex
	n  int64 // next log index
}

// New starts a virtual Sigstore.
func New() (*Sigstore, error) {
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		return nil, fmt.Errorf("signtest: %w", err)
	}
	return &Sigstore{VS: vs}, nil
}

// TrustedMaterial is the verifier's root: the virtual Fulcio, Rekor and TSA.
func (s *Sigstore) TrustedMaterial() root.TrustedMaterial { return s.VS }

// Signer returns a keyless Signer whose certificate names identity
// (its SAN) and issuer, and whose signatures enter the virtual log.
func (s *Sigstore) Signer(identity, issuer string, opts ...sign.Option) (*sign.Signer, error) {
	cert, key, err := s.VS.GenerateLeafCert(identity, issuer)
	if err != nil {
		return nil, fmt.Errorf("signtest: leaf: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, errors.New("signtest: the leaf key is no crypto.Signer")
	}
	kp, err := sign.NewKeyPair(signer)
	if err != nil {
		return nil, err
	}
	certs := staticCert(cert.Raw)
	rekor := sgsign.NewRekor(&sgsign.RekorOptions{Client: &rekorClient{s: s}})
	return sign.New(kp, append([]sign.Option{sign.WithCertificateProvider(certs, nil), sign.WithTransparency(rekor)}, opts...)...)
}

// Verifier returns a verifier for identity and issuer against the virtual
// root (no SCTs: the virtual Fulcio embeds none).
func (s *Sigstore) Verifier(identity, issuer string) (*sign.Verifier, error) {
	return sign.NewVerifier(sign.WithIdentity(sign.Identity{Subject: identity, Issuer: issuer}),
		sign.WithTrustedRoot(s.VS), sign.WithSCTs(0))
}

type staticCert []byte

func (c staticCert) GetCertificate(context.Context, sgsign.Keypair, *sgsign.CertificateProviderOptions) ([]byte, error) {
	return c, nil
}

// rekorClient is sign.RekorClient over the virtual log: it canonicalizes
// the proposed entry as Rekor does, dates it now, and returns it with the
// log's signed entry timestamp and an inclusion proof.
type rekorClient struct{ s *Sigstore }

func (r *rekorClient) CreateLogEntry(p *entries.CreateLogEntryParams, _ ...entries.ClientOption) (*entries.CreateLogEntryCreated, error) {
	ctx := p.Context
	if ctx == nil {
		ctx = context.Background()
	}
	impl, err := types.CreateVersionedEntry(p.ProposedEntry)
	if err != nil {
		return nil, fmt.Errorf("signtest rekor: %w", err)
	}
	body, err := types.CanonicalizeEntry(ctx, impl)
	if err != nil {
		return nil, fmt.Errorf("signtest rekor: %w", err)
	}
	logID, err := r.s.VS.RekorLogID()
	if err != nil {
		return nil, err
	}
	r.s.mu.Lock()
	idx := r.s.n
	r.s.n++
	r.s.mu.Unlock()
	now := time.Now().Unix()
	b64 := base64.StdEncoding.EncodeToString(body)
	set, err := r.s.VS.RekorSignPayload(tlog.RekorPayload{Body: b64, IntegratedTime: now, LogIndex: idx, LogID: logID})
	if err != nil {
		return nil, fmt.Errorf("signtest rekor: %w", err)
	}
	proof, err := r.s.VS.GetInclusionProof(body)
	if err != nil {
		return nil, fmt.Errorf("signtest rekor: %w", err)
	}
	uuid := fmt.Sprintf("%016x", idx)
	return &entries.CreateLogEntryCreated{ETag: uuid, Payload: models.LogEntry{uuid: models.LogEntryAnon{
		Body: b64, IntegratedTime: &now, LogIndex: &idx, LogID: &logID,
		Verification: &models.LogEntryAnonVerification{SignedEntryTimestamp: strfmt.Base64(set), InclusionProof: proof},
	}}}, nil
}

func (r *rekorClient) GetLogEntryByUUID(*entries.GetLogEntryByUUIDParams, ...entries.ClientOption) (*entries.GetLogEntryByUUIDOK, error) {
	return nil, errors.New("signtest rekor: entries are never looked up")
}
