package oci

// Media types and annotation keys from the OCI image spec v1.1
// (github.com/opencontainers/image-spec: media-types.md, annotations.md).
const (
	MediaTypeIndex    = "application/vnd.oci.image.index.v1+json"
	MediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	MediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	MediaTypeLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"

	AnnotationBaseName   = "org.opencontainers.image.base.name"
	AnnotationBaseDigest = "org.opencontainers.image.base.digest"
	AnnotationCreated    = "org.opencontainers.image.created"
	AnnotationRefName    = "org.opencontainers.image.ref.name"
	AnnotationVersion    = "org.opencontainers.image.version"
	AnnotationTitle      = "org.opencontainers.image.title"

	// LayoutVersion is the imageLayoutVersion written to oci-layout.
	LayoutVersion = "1.0.0"
)

// Descriptor points at a blob by digest and size (image-spec descriptor.md).
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *Platform         `json:"platform,omitempty"`
}

// Platform is the os/architecture a manifest runs on.
type Platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// Index is index.json (image-spec image-index.md).
type Index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []Descriptor `json:"manifests"`
}

// Manifest is an image manifest (image-spec manifest.md).
type Manifest struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	Config        Descriptor        `json:"config"`
	Layers        []Descriptor      `json:"layers"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// Config is the image configuration (image-spec config.md).
type Config struct {
	Created      string        `json:"created,omitempty"`
	Architecture string        `json:"architecture"`
	OS           string        `json:"os"`
	Config       RuntimeConfig `json:"config"`
	RootFS       RootFS        `json:"rootfs"`
	History      []History     `json:"history,omitempty"`
}

// RuntimeConfig is the execution part of Config.
type RuntimeConfig struct {
	Env        []string          `json:"Env,omitempty"`
	Entrypoint []string          `json:"Entrypoint,omitempty"`
	Cmd        []string          `json:"Cmd,omitempty"`
	WorkingDir string            `json:"WorkingDir,omitempty"`
	Labels     map[string]string `json:"Labels,omitempty"`
}

// RootFS lists the uncompressed layer digests.
type RootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}

// History describes how a layer was made.
type History struct {
	Created   string `json:"created,omitempty"`
	CreatedBy string `json:"created_by,omitempty"`
	Comment   string `json:"comment,omitempty"`
}

// layoutFile is the oci-layout marker.
type layoutFile struct {
	ImageLayoutVersion string `json:"imageLayoutVersion"`
}
