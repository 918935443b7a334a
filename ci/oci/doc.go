// Package oci assembles an OCI image layout (oci-layout, index.json,
// blobs/sha256/...) for the cuzk daemon natively, with the standard library
// only: no registry, no container engine.
//
// The layout holds one deterministic layer (the daemon binary and the kernel
// manifest, every entry with fixed owner, mode and mtime) and a config that
// records the pinned runtime base image as the annotations and labels
// org.opencontainers.image.base.name and org.opencontainers.image.base.digest.
// Equal inputs give byte-identical layouts, so the layout's manifest digest is
// a reproducible name for the payload.
//
// The base image's own layers are not fetched here (that needs a registry).
// They are applied when the image is pushed through Dagger
// (Container().From(runtime).WithFile(...)), which package ci does from the
// same Image value; the pushed image's digest then depends on the engine's
// tar writer, while the payload layer written here stays the reproducible
// artifact. Verify checks that every digest and size in a layout matches the
// blob it names.
//
// Functions here are safe for concurrent use on distinct directories.
package oci
