package sign_test

import (
	"context"
	"fmt"

	"github.com/cuzk-dev/cuzk/ci/sign"
)

// A release file signed with a key and checked with its public key.
func Example() {
	ctx := context.Background()
	kp, err := sign.GenerateKeyPair()
	if err != nil {
		panic(err)
	}
	s, err := sign.New(kp)
	if err != nil {
		panic(err)
	}
	data := []byte("e3b0c442...  cuzk-v0.1.0-linux-amd64.tar.gz\n")
	b, err := s.SignBlob(ctx, data)
	if err != nil {
		panic(err)
	}
	bundleJSON, err := sign.MarshalBundle(b) // written as SHA256SUMS.sigstore.json
	if err != nil {
		panic(err)
	}
	v, err := sign.NewVerifier(sign.WithPublicKey(kp.GetPublicKey()))
	if err != nil {
		panic(err)
	}
	_, err = v.VerifyBlob(bundleJSON, data)
	fmt.Println("verified:", err == nil)
	_, err = v.VerifyBlob(bundleJSON, []byte("forged"))
	fmt.Println("forged:", err != nil)
	// Output:
	// verified: true
	// forged: true
}
