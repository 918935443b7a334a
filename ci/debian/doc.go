// Package debian builds the daemon image's runtime base from pinned Debian
// packages, in the spirit of distroless base-debian12: each .deb is taken
// from a local cache directory or fetched with `apt-get download`, checked
// against its pinned sha256 (a mismatch is an error naming the package; a
// damaged cached file is removed and fetched again), and only its data
// archive is unpacked, into layer entries with owner 0:0 (the image's tar
// writer fixes every mtime). No maintainer script runs; what a script would
// generate and the image needs (the CA bundle, /etc/passwd with the
// nonroot user, /tmp) is generated deterministically by Rootfs.
//
// Fetch writes only into its cache directory, each file by an atomic
// replace, so concurrent fetches of the same pins are safe.
package debian
