package oci

import (
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Reference is an image reference pinned by digest, e.g.
// "nvidia/cuda:11.8.0-base-ubuntu22.04@sha256:79e5...".
type Reference struct {
	// Name is the part before "@": repository and optional tag, as written.
	Name string
	// Digest names the manifest.
	Digest v1.Hash
}

// ParseReference parses a digest-pinned reference with ggcr's name package
// (the repository must be valid and the digest sha256); a
// reference without a digest is an error, so nothing unpinned reaches an
// image or plan.
func ParseReference(ref string) (Reference, error) {
	d, err := name.NewDigest(ref)
	if err != nil {
		return Reference{}, fmt.Errorf("image reference %q: not pinned by digest (want name@sha256:<hex>): %w", ref, err)
	}
	h, err := v1.NewHash(d.DigestStr())
	if err != nil || h.Algorithm != "sha256" {
		return Reference{}, fmt.Errorf("image reference %q: digest %q is not sha256:<64 hex>", ref, d.DigestStr())
	}
	return Reference{Name: ref[:len(ref)-len(d.DigestStr())-1], Digest: h}, nil
}

// String returns name@digest.
func (r Reference) String() string { return r.Name + "@" + r.Digest.String() }
