// Package release builds cuzk's release bundle reproducibly: the daemon's
// main packages compiled with -trimpath, -buildvcs=false and
// -ldflags="-s -w -buildid=" under a pinned environment (CGO settings,
// GOAMD64, GOFLAGS, GOTOOLCHAIN=local, SOURCE_DATE_EPOCH), packed into a
// tar.gz with sorted entries, fixed mtimes, owners and modes, next to a
// SHA256SUMS file. The same source tree, Go release and C compiler give
// byte-identical archives wherever the tree lives, natively or inside the
// pinned build image.
//
// Bundle.Image turns a bundle into the OCI payload image of package ci/oci.
// Build runs `go build` as a child process and writes only under
// Options.OutDir; concurrent calls must use distinct OutDirs.
package release
