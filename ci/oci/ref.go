package oci

import (
	"fmt"
	"regexp"
	"strings"
)

var digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// Reference is an image reference pinned by digest, e.g.
// "nvidia/cuda:11.8.0-base-ubuntu22.04@sha256:79e5...".
type Reference struct {
	// Name is the part before "@": repository and optional tag.
	Name string
	// Digest is "sha256:<64 hex>".
	Digest string
}

// ParseReference splits a digest-pinned reference; a reference without a
// well-formed sha256 digest is an error, so nothing unpinned reaches a
// manifest.
func ParseReference(ref string) (Reference, error) {
	name, digest, ok := strings.Cut(ref, "@")
	if !ok || name == "" {
		return Reference{}, fmt.Errorf("image reference %q: not pinned by digest (want name@sha256:<hex>)", ref)
	}
	if !digestRE.MatchString(digest) {
		return Reference{}, fmt.Errorf("image reference %q: digest %q is not sha256:<64 lowercase hex>", ref, digest)
	}
	if strings.ContainsAny(name, " \t\n@") {
		return Reference{}, fmt.Errorf("image reference %q: bad name %q", ref, name)
	}
	return Reference{Name: name, Digest: digest}, nil
}

// String returns name@digest.
func (r Reference) String() string { return r.Name + "@" + r.Digest }
