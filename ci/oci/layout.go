package oci

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Image describes the payload image: the files of its one layer and its
// runtime configuration. The zero value is not valid; see Validate.
type Image struct {
	// Base is the runtime base image, pinned by digest; it is recorded in
	// the manifest annotations and config labels and applied at push time.
	Base string
	// Files make up the single layer.
	Files      []File
	Entrypoint []string
	Cmd        []string
	Env        []string
	WorkingDir string
	// Labels are added to the config's labels next to the base labels.
	Labels map[string]string
	// Created is the image time, normally SOURCE_DATE_EPOCH; it is also
	// every layer entry's mtime.
	Created time.Time
	// OS and Architecture name the platform, e.g. "linux" and "amd64".
	OS, Architecture string
	// RefName tags the manifest in index.json (e.g. a release version).
	RefName string
	// CreatedBy is the history note for the layer.
	CreatedBy string
}

// Validate reports the first thing that keeps img from being written.
func (img Image) Validate() error {
	if _, err := ParseReference(img.Base); err != nil {
		return fmt.Errorf("image base: %w", err)
	}
	if len(img.Files) == 0 {
		return errors.New("image: no files for the layer")
	}
	if img.OS == "" || img.Architecture == "" {
		return errors.New("image: OS and Architecture are required")
	}
	if img.Created.IsZero() {
		return errors.New("image: Created is required (use SOURCE_DATE_EPOCH)")
	}
	if strings.ContainsAny(img.RefName, "/ \t\n") {
		return fmt.Errorf("image: ref name %q may not contain '/' or spaces", img.RefName)
	}
	return nil
}

// ConfigLabels returns the config labels: img.Labels plus the base image's name
// and digest under the OCI base annotation keys.
func (img Image) ConfigLabels() (map[string]string, error) {
	ref, err := ParseReference(img.Base)
	if err != nil {
		return nil, err
	}
	labels := maps.Clone(img.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[AnnotationBaseName] = ref.Name
	labels[AnnotationBaseDigest] = ref.Digest
	return labels, nil
}

// Blobs is an assembled layout held in memory.
type Blobs struct {
	// Index is the index.json bytes.
	Index []byte
	// Manifest describes the image manifest listed in Index.
	Manifest Descriptor
	// Blobs maps "sha256:<hex>" to content: manifest, config and layer.
	Blobs map[string][]byte
}

// Assemble builds the layer, config, manifest and index of img in memory.
func Assemble(img Image) (Blobs, error) {
	if err := img.Validate(); err != nil {
		return Blobs{}, err
	}
	layer, err := TarGz(img.Files, img.Created)
	if err != nil {
		return Blobs{}, fmt.Errorf("image layer: %w", err)
	}
	labels, err := img.ConfigLabels()
	if err != nil {
		return Blobs{}, err
	}
	created := img.Created.UTC().Format(time.RFC3339)
	cfg, err := json.Marshal(Config{
		Created: created, Architecture: img.Architecture, OS: img.OS,
		Config: RuntimeConfig{Env: img.Env, Entrypoint: img.Entrypoint, Cmd: img.Cmd,
			WorkingDir: img.WorkingDir, Labels: labels},
		RootFS:  RootFS{Type: "layers", DiffIDs: []string{layer.DiffID}},
		History: []History{{Created: created, CreatedBy: img.CreatedBy}},
	})
	if err != nil {
		return Blobs{}, fmt.Errorf("encode image config: %w", err)
	}
	ann := map[string]string{AnnotationBaseName: labels[AnnotationBaseName],
		AnnotationBaseDigest: labels[AnnotationBaseDigest], AnnotationCreated: created}
	if img.RefName != "" {
		ann[AnnotationVersion] = img.RefName
	}
	man, err := json.Marshal(Manifest{SchemaVersion: 2, MediaType: MediaTypeManifest,
		Config:      Descriptor{MediaType: MediaTypeConfig, Digest: Digest(cfg), Size: int64(len(cfg))},
		Layers:      []Descriptor{{MediaType: MediaTypeLayer, Digest: layer.Digest, Size: int64(len(layer.Blob))}},
		Annotations: ann})
	if err != nil {
		return Blobs{}, fmt.Errorf("encode image manifest: %w", err)
	}
	desc := Descriptor{MediaType: MediaTypeManifest, Digest: Digest(man), Size: int64(len(man)),
		Platform: &Platform{Architecture: img.Architecture, OS: img.OS}}
	if img.RefName != "" {
		desc.Annotations = map[string]string{AnnotationRefName: img.RefName}
	}
	index, err := json.Marshal(Index{SchemaVersion: 2, MediaType: MediaTypeIndex, Manifests: []Descriptor{desc}})
	if err != nil {
		return Blobs{}, fmt.Errorf("encode image index: %w", err)
	}
	return Blobs{Index: index, Manifest: desc, Blobs: map[string][]byte{
		layer.Digest: layer.Blob, Digest(cfg): cfg, desc.Digest: man}}, nil
}

// Write assembles img and writes it as an OCI image layout into dir, which
// must be absent or empty (so no stale blob survives). It returns the
// manifest's descriptor.
func Write(dir string, img Image) (Descriptor, error) {
	b, err := Assemble(img)
	if err != nil {
		return Descriptor{}, err
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return Descriptor{}, fmt.Errorf("write image layout: %s is not empty", dir)
	}
	blobDir := filepath.Join(dir, "blobs", "sha256")
	if err := os.MkdirAll(blobDir, 0o755); err != nil {
		return Descriptor{}, fmt.Errorf("write image layout: %w", err)
	}
	layout, err := json.Marshal(layoutFile{ImageLayoutVersion: LayoutVersion})
	if err != nil {
		return Descriptor{}, fmt.Errorf("encode oci-layout: %w", err)
	}
	files := map[string][]byte{"oci-layout": layout, "index.json": b.Index}
	for d, data := range b.Blobs {
		files[filepath.Join("blobs", "sha256", strings.TrimPrefix(d, "sha256:"))] = data
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return Descriptor{}, fmt.Errorf("write image layout: %w", err)
		}
	}
	return b.Manifest, nil
}
