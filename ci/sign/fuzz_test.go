package sign

import (
	"bytes"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/verify"
)

// FuzzImageAnnotations feeds cosign annotations and payloads, as an
// untrusted registry serves them, to the image verifier's parsers: they
// may fail, never panic, and a fuzzed signature never verifies.
func FuzzImageAnnotations(f *testing.F) {
	f.Add([]byte(`{"critical":{"type":"cosign container image signature"}}`), "MEUCIQ==", "", `{"SignedEntryTimestamp":"","Payload":{"body":"e30=","logID":"00"}}`)
	f.Add([]byte(`{}`), "", "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n", "")
	kp, err := GenerateKeyPair()
	if err != nil {
		f.Fatal(err)
	}
	v, err := NewVerifier(WithPublicKey(kp.GetPublicKey()))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, payload []byte, sig, cert, rekor string) {
		ann := map[string]string{AnnotationSignature: sig, AnnotationCertificate: cert, AnnotationBundle: rekor}
		if b, err := bundleFromAnnotations(payload, ann); err == nil {
			if _, err := v.verify(b, verify.WithArtifact(bytes.NewReader(payload))); err == nil {
				t.Fatal("a fuzzed signature verified")
			}
		}
		_, _ = tlogEntryFromRekorBundle([]byte(rekor))
	})
}
