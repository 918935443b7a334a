// Package release builds cuzk's releases reproducibly and checks them.
//
// Build compiles the daemon's main packages with -trimpath, -buildvcs=false
// and -ldflags="-s -w -buildid=" under a pinned environment (CGO settings,
// GOAMD64, GOFLAGS, GOTOOLCHAIN=local, SOURCE_DATE_EPOCH) and packs them
// with the kernel manifest into a tar.gz with sorted entries, fixed mtimes,
// owners and modes. Make adds the OCI image (Bundle.Image: the base layer
// of pinned Debian packages from ci/debian, then the payload, assembled by
// ci/oci), an SPDX 2.3 SBOM (spdx/tools-golang), an in-toto Statement with
// a SLSA provenance v1 predicate (in-toto/attestation) and SHA256SUMS; Run
// is the whole `go run mage.go release`, reading its inputs from the
// environment. The same source tree, Go release and C compiler give
// byte-identical release directories wherever the tree lives, natively or
// inside the pinned build image.
//
// Verify re-checks a release directory and names the first damaged file;
// Rebuild releases the commit a provenance names again and compares bytes
// (CompareDirs).
//
// Build and Make run `go build` as a child process and write only under
// Options.OutDir, each file by an atomic replace (internal/renameio);
// concurrent calls must use distinct OutDirs. Verify only reads.
package release
