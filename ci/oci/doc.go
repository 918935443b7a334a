// Package oci assembles cuzk's OCI images natively and offline with
// go-containerregistry: deterministic layers from in-memory file trees,
// an image config and manifest built with mutate, written as an OCI image
// layout, verified with ggcr's validate, and published with remote.
//
// Every layer comes from this package's tar writer, which ggcr has no
// equivalent of: entries sorted by name, parent directories added, owner
// 0:0 unless an entry says otherwise, every mtime the image's Created time
// (SOURCE_DATE_EPOCH), USTAR headers (PAX only for names USTAR cannot hold)
// without user names or access times. The gzip stream is compress/gzip's
// at a fixed level, stable for one Go release (which is why Go is pinned). Equal inputs give byte-identical
// layouts, so the manifest digest is a reproducible name for the image.
//
// Functions here are safe for concurrent use on distinct directories.
package oci
