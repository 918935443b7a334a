package oci

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/authn/github"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Keychain finds registry credentials: docker's config and credential
// helpers, then GITHUB_ACTOR/GITHUB_TOKEN for ghcr.io (as in a GitHub
// workflow, so no login step is needed there).
var Keychain = authn.NewMultiKeychain(authn.DefaultKeychain, github.Keychain)

// Push uploads img to address (a repository, optionally with a tag) with
// the credentials Keychain finds and returns the pushed image by digest,
// repository@sha256:..., which is how releases name it.
func Push(ctx context.Context, img v1.Image, address string) (name.Digest, error) {
	ref, err := name.ParseReference(address)
	if err != nil {
		return name.Digest{}, fmt.Errorf("push %s: %w", address, err)
	}
	d, err := img.Digest()
	if err != nil {
		return name.Digest{}, fmt.Errorf("push %s: image digest: %w", address, err)
	}
	if err := remote.Write(ref, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(Keychain)); err != nil {
		return name.Digest{}, fmt.Errorf("push %s: %w", address, err)
	}
	byDigest, err := name.NewDigest(ref.Context().Name() + "@" + d.String())
	if err != nil {
		return name.Digest{}, fmt.Errorf("push %s: %w", address, err)
	}
	return byDigest, nil
}

// PushLayout verifies the image layout in dir and pushes its one image to
// address (see Push).
func PushLayout(ctx context.Context, dir, address string) (name.Digest, error) {
	c, err := Verify(dir)
	if err != nil {
		return name.Digest{}, err
	}
	return Push(ctx, c.Image, address)
}
