package oci

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Annotation and label keys from the OCI image spec (annotations.md).
const (
	AnnotationBaseName   = "org.opencontainers.image.base.name"
	AnnotationBaseDigest = "org.opencontainers.image.base.digest"
	AnnotationCreated    = "org.opencontainers.image.created"
	AnnotationRefName    = "org.opencontainers.image.ref.name"
	AnnotationVersion    = "org.opencontainers.image.version"
	AnnotationTitle      = "org.opencontainers.image.title"
	AnnotationRevision   = "org.opencontainers.image.revision"
)

// LayerSpec is one layer of an Image and its history note: Entries made
// into a deterministic layer, or a Layer already built (a root file system
// streamed from a tool too large to hold in memory).
type LayerSpec struct {
	Entries []Entry
	Layer   v1.Layer
	// CreatedBy and Comment go into the config's history for this layer.
	CreatedBy, Comment string
}

// Image describes an image to assemble. The zero value is not valid; see
// Validate.
type Image struct {
	// Layers are applied in order (base first).
	Layers     []LayerSpec
	Entrypoint []string
	Cmd        []string
	Env        []string
	WorkingDir string
	// User is the config's user ("65532:65532").
	User string
	// Labels are the config's labels.
	Labels map[string]string
	// Annotations are the manifest's annotations (AnnotationCreated is
	// added from Created).
	Annotations map[string]string
	// Created is the image time, normally SOURCE_DATE_EPOCH; it is also
	// every layer entry's mtime.
	Created time.Time
	// OS and Architecture name the platform, e.g. "linux" and "amd64".
	OS, Architecture string
}

// Validate reports the first thing that keeps img from being built.
func (img Image) Validate() error {
	if len(img.Layers) == 0 {
		return errors.New("image: no layers")
	}
	for i, l := range img.Layers {
		if (len(l.Entries) == 0) == (l.Layer == nil) {
			return fmt.Errorf("image: layer %d (%s): want entries or a built layer, not both or neither", i, l.CreatedBy)
		}
	}
	if img.OS == "" || img.Architecture == "" {
		return errors.New("image: OS and Architecture are required")
	}
	if img.Created.IsZero() {
		return errors.New("image: Created is required (use SOURCE_DATE_EPOCH)")
	}
	if len(img.Entrypoint) == 0 && len(img.Cmd) == 0 {
		return errors.New("image: no entrypoint and no command")
	}
	if len(img.Entrypoint) > 0 && !strings.HasPrefix(img.Entrypoint[0], "/") {
		return fmt.Errorf("image: entrypoint %q: want an absolute program path", img.Entrypoint)
	}
	return nil
}

// Platform returns img's platform.
func (img Image) Platform() v1.Platform {
	return v1.Platform{OS: img.OS, Architecture: img.Architecture}
}

// Build assembles img with go-containerregistry: an OCI manifest and config
// over one deterministic layer per LayerSpec. The result is held in memory.
func Build(img Image) (v1.Image, error) {
	if err := img.Validate(); err != nil {
		return nil, err
	}
	created := v1.Time{Time: time.Unix(img.Created.Unix(), 0).UTC()}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	out, err := mutate.ConfigFile(base, &v1.ConfigFile{
		Architecture: img.Architecture, OS: img.OS, Created: created,
		RootFS: v1.RootFS{Type: "layers"},
		Config: v1.Config{Env: img.Env, Entrypoint: img.Entrypoint, Cmd: img.Cmd, WorkingDir: img.WorkingDir,
			User: img.User, Labels: maps.Clone(img.Labels)},
	})
	if err != nil {
		return nil, fmt.Errorf("image config: %w", err)
	}
	for i, spec := range img.Layers {
		l := spec.Layer
		if l == nil {
			if l, err = Layer(spec.Entries, img.Created); err != nil {
				return nil, fmt.Errorf("image layer %d (%s): %w", i, spec.CreatedBy, err)
			}
		}
		out, err = mutate.Append(out, mutate.Addendum{Layer: l, MediaType: types.OCILayer,
			History: v1.History{Created: created, CreatedBy: spec.CreatedBy, Comment: spec.Comment}})
		if err != nil {
			return nil, fmt.Errorf("image layer %d (%s): %w", i, spec.CreatedBy, err)
		}
	}
	ann := maps.Clone(img.Annotations)
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationCreated] = created.Format(time.RFC3339)
	annotated, ok := mutate.Annotations(out, ann).(v1.Image)
	if !ok {
		return nil, errors.New("image annotations: mutate did not return an image")
	}
	return annotated, nil
}
