package sign

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"

	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	sgsign "github.com/sigstore/sigstore-go/pkg/sign"
)

// PEM block types this package reads and writes.
const (
	pemECPrivate = "EC PRIVATE KEY" // SEC 1 (openssl ecparam -genkey)
	pemPKCS8     = "PRIVATE KEY"    // PKCS #8 (openssl genpkey)
	pemPublic    = "PUBLIC KEY"     // PKIX (cosign.pub, openssl ec -pubout)
)

// ErrKeyType is returned for a key that is not ECDSA P-256, the one
// algorithm release signatures use (cosign's default, Sigstore's
// PKIX_ECDSA_P256_SHA_256).
var ErrKeyType = errors.New("sign: want an ECDSA P-256 key")

// KeyPair is a long-lived ECDSA P-256 key as sigstore-go's sign.Keypair:
// bundles it signs carry its hint (base64 of the SHA-256 of the public
// key's PKIX DER, as sigstore-go's ephemeral keys do), not the key itself.
// It is safe for concurrent use; Rand, when set, replaces crypto/rand.
type KeyPair struct {
	key  *ecdsa.PrivateKey
	Rand io.Reader
}

var _ sgsign.Keypair = (*KeyPair)(nil)

// NewKeyPair wraps an ECDSA P-256 private key.
func NewKeyPair(key crypto.Signer) (*KeyPair, error) {
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%w, have %T", ErrKeyType, key)
	}
	return &KeyPair{key: ec}, nil
}

// GenerateKeyPair makes a fresh P-256 key.
func GenerateKeyPair() (*KeyPair, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("sign: generate key: %w", err)
	}
	return &KeyPair{key: k}, nil
}

// LoadKeyPair reads a PEM private key (SEC 1 "EC PRIVATE KEY" or PKCS #8
// "PRIVATE KEY", unencrypted) from path.
func LoadKeyPair(path string) (*KeyPair, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sign: read key: %w", err)
	}
	k, err := ParsePrivateKey(raw)
	if err != nil {
		return nil, fmt.Errorf("sign: key %s: %w", path, err)
	}
	return NewKeyPair(k)
}

// ParsePrivateKey decodes the first PEM private key in raw.
func ParsePrivateKey(raw []byte) (crypto.Signer, error) {
	for rest := raw; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return nil, errors.New("no PEM private key (want EC PRIVATE KEY or PRIVATE KEY; encrypted keys are not read)")
		}
		switch b.Type {
		case pemECPrivate:
			return x509.ParseECPrivateKey(b.Bytes)
		case pemPKCS8:
			k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
			if err != nil {
				return nil, err
			}
			s, ok := k.(crypto.Signer)
			if !ok {
				return nil, fmt.Errorf("%w, have %T", ErrKeyType, k)
			}
			return s, nil
		}
	}
}

// LoadPublicKey reads a PEM public key ("PUBLIC KEY", as cosign.pub) from path.
func LoadPublicKey(path string) (*ecdsa.PublicKey, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sign: read public key: %w", err)
	}
	pub, err := ParsePublicKey(raw)
	if err != nil {
		return nil, fmt.Errorf("sign: public key %s: %w", path, err)
	}
	return pub, nil
}

// ParsePublicKey decodes a PEM ECDSA P-256 public key.
func ParsePublicKey(raw []byte) (*ecdsa.PublicKey, error) {
	b, _ := pem.Decode(raw)
	if b == nil || b.Type != pemPublic {
		return nil, errors.New("no PEM PUBLIC KEY block")
	}
	k, err := x509.ParsePKIXPublicKey(b.Bytes)
	if err != nil {
		return nil, err
	}
	ec, ok := k.(*ecdsa.PublicKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%w, have %T", ErrKeyType, k)
	}
	return ec, nil
}

// PrivateKeyPEM encodes k's private key as PKCS #8 PEM (keep it 0600).
func (k *KeyPair) PrivateKeyPEM() ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k.key)
	if err != nil {
		return nil, fmt.Errorf("sign: encode private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemPKCS8, Bytes: der}), nil
}

// PublicKeyPEM encodes the public key as PKIX PEM.
func (k *KeyPair) PublicKeyPEM() []byte {
	der, err := x509.MarshalPKIXPublicKey(&k.key.PublicKey)
	if err != nil {
		panic(err) // a P-256 key always marshals
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemPublic, Bytes: der})
}

// KeyHint is a public key's hint in a bundle: base64 of the SHA-256 of its
// PKIX DER.
func KeyHint(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("sign: key hint: %w", err)
	}
	sum := sha256.Sum256(der)
	return base64.StdEncoding.EncodeToString(sum[:]), nil
}

// GetHashAlgorithm is SHA2_256.
func (k *KeyPair) GetHashAlgorithm() protocommon.HashAlgorithm {
	return protocommon.HashAlgorithm_SHA2_256
}

// GetSigningAlgorithm is PKIX_ECDSA_P256_SHA_256.
func (k *KeyPair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return protocommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256
}

// GetHint returns KeyHint of the public key.
func (k *KeyPair) GetHint() []byte {
	h, err := KeyHint(&k.key.PublicKey)
	if err != nil {
		panic(err) // a P-256 key always marshals
	}
	return []byte(h)
}

// GetKeyAlgorithm is "ECDSA" (Fulcio's name).
func (k *KeyPair) GetKeyAlgorithm() string { return "ECDSA" }

// GetPublicKey returns the public key.
func (k *KeyPair) GetPublicKey() crypto.PublicKey { return &k.key.PublicKey }

// GetPublicKeyPem returns PublicKeyPEM as a string.
func (k *KeyPair) GetPublicKeyPem() (string, error) { return string(k.PublicKeyPEM()), nil }

// SignData hashes data with SHA-256 and signs the digest (ASN.1 ECDSA),
// returning the signature and the digest.
func (k *KeyPair) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	sum := sha256.Sum256(data)
	r := k.Rand
	if r == nil {
		r = rand.Reader
	}
	sig, err := ecdsa.SignASN1(r, k.key, sum[:])
	if err != nil {
		return nil, nil, fmt.Errorf("sign: %w", err)
	}
	return sig, sum[:], nil
}
