package oci_test

import (
	"fmt"

	"github.com/cuzk-dev/cuzk/ci/oci"
)

func ExampleParseReference() {
	r, err := oci.ParseReference("nvidia/cuda:11.8.0-base-ubuntu22.04@sha256:79e5b2cf878ee9006f5b3738caeea34fdc7708a32db53fe3e80db0b48bd286a0")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Name)
	fmt.Println(r.Digest.Algorithm, r.Digest.Hex[:8])
	// Output:
	// nvidia/cuda:11.8.0-base-ubuntu22.04
	// sha256 79e5b2cf
}
