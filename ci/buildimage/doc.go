// Package buildimage builds cuzk's own CUDA build image from pins: a lock of
// Debian 12 packages (every one with version and sha256) and the pinned Go
// toolchain.
//
// The flow has three steps, each usable alone:
//
//   - Resolve computes the closure of the lock's includes (plus Debian's
//     Essential set and apt, what mmdebstrap's apt variant installs) with
//     apt in a throwaway root, and returns the Lock that image:lock writes.
//   - Fetch downloads and verifies every locked .deb into a cache directory
//     (a damaged file is removed and fetched again).
//   - Build lays the root down with mmdebstrap from a local repository of
//     exactly the locked .debs (maintainer scripts, alternatives and ldconfig
//     run as on any Debian install), under SOURCE_DATE_EPOCH, streams its
//     tar into one gzip layer, adds the Go toolchain as a second layer made
//     from the golang.org/toolchain module zip, and writes an OCI image
//     layout with go-containerregistry. Equal locks give equal digests.
//
// Built images are cached by the lock's ID (LockID): an unchanged lock never
// rebuilds. A cache entry is a complete layout written to a temporary
// directory and renamed into place, so a crash leaves no half entry; a layout
// whose digest is not the one recorded is removed and rebuilt.
package buildimage
