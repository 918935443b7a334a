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
// The SBOM names a supplier and a licence for every package (cuzk's own
// under License, "Apache-2.0 OR MIT"; NOASSERTION where unknown) and is
// checked against the official SPDX 2.3 JSON schema (ValidateSBOM; the
// schema is embedded from testdata, whose note names its source). The
// bundle and the image carry LICENSE, LICENSE-APACHE and LICENSE-MIT.
//
// Verify re-checks a release directory for bytes and for meaning, naming
// the first damaged file and, inside the SBOM or provenance, the field: a
// forger who edits the SBOM (a module's version, a deleted module) or the
// provenance (a commit that disagrees with its gitCommit or uri) and
// regenerates SHA256SUMS is caught, because the documents are compared
// with the binaries' embedded Go build info and kernel manifest, and the
// provenance's fields with each other. Run empties the release directory
// first (EmptyOutDir) and Verify refuses files SHA256SUMS does not list.
// Rebuild releases the commit a provenance names again and compares bytes
// (CompareDirs), naming the file that differs.
//
// SignDist signs a release directory with ci/sign (a key, or keyless):
// a Sigstore bundle beside SHA256SUMS and each file it lists, the
// provenance as a DSSE-signed statement whose builder is the signer's
// identity, and the image's cosign signature in ImageSignatureDir. The
// signatures sit beside the reproducible files, never in them, so a
// rebuild still compares byte for byte. VerifyRelease checks them against
// a public key or a certificate identity (SignaturePolicy) before Verify's
// checks; an unsigned release passes only with leave to skip them.
//
// Build and Make run `go build` as a child process and write only under
// Options.OutDir, each file by an atomic replace (internal/renameio);
// concurrent calls must use distinct OutDirs. Verify only reads.
package release
