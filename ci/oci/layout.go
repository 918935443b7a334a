package oci

import (
	"fmt"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// WriteLayout writes img as an OCI image layout into dir, which must be
// absent or empty (so no stale blob survives), with the index entry
// annotated org.opencontainers.image.ref.name=refName when refName is set.
// It returns the manifest's descriptor (digest, size, platform).
func WriteLayout(dir string, img v1.Image, platform v1.Platform, refName string) (v1.Descriptor, error) {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return v1.Descriptor{}, fmt.Errorf("write image layout: %s is not empty", dir)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Descriptor{}, fmt.Errorf("write image layout %s: %w", dir, err)
	}
	opts := []layout.Option{layout.WithPlatform(platform)}
	if refName != "" {
		opts = append(opts, layout.WithAnnotations(map[string]string{AnnotationRefName: refName}))
	}
	if err := p.AppendImage(img, opts...); err != nil {
		return v1.Descriptor{}, fmt.Errorf("write image layout %s: %w", dir, err)
	}
	c, err := Verify(dir)
	if err != nil {
		return v1.Descriptor{}, err
	}
	return c.Descriptor, nil
}

// Checked is what Verify read from a layout.
type Checked struct {
	// Descriptor is the index's entry for the one image.
	Descriptor v1.Descriptor
	Image      v1.Image
	Manifest   *v1.Manifest
	Config     *v1.ConfigFile
}

// Verify checks an image layout in dir with ggcr's validate package: the
// index lists exactly one image, and its manifest, config and every layer
// exist with the digests and sizes their descriptors give, and each layer's
// uncompressed digest is the config's diff_id. It only reads dir.
func Verify(dir string) (Checked, error) {
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return Checked{}, fmt.Errorf("verify layout %s: %w", dir, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return Checked{}, fmt.Errorf("verify layout %s: index: %w", dir, err)
	}
	if len(im.Manifests) != 1 || !im.Manifests[0].MediaType.IsImage() {
		return Checked{}, fmt.Errorf("verify layout %s: index lists %d manifests, want one image", dir, len(im.Manifests))
	}
	if err := validate.Index(idx); err != nil {
		return Checked{}, fmt.Errorf("verify layout %s: %w", dir, err)
	}
	c := Checked{Descriptor: im.Manifests[0]}
	if c.Image, err = idx.Image(c.Descriptor.Digest); err != nil {
		return Checked{}, fmt.Errorf("verify layout %s: image %s: %w", dir, c.Descriptor.Digest, err)
	}
	if c.Manifest, err = c.Image.Manifest(); err != nil {
		return Checked{}, fmt.Errorf("verify layout %s: manifest: %w", dir, err)
	}
	if c.Config, err = c.Image.ConfigFile(); err != nil {
		return Checked{}, fmt.Errorf("verify layout %s: config: %w", dir, err)
	}
	return c, nil
}
