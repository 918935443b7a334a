// Package sign signs cuzk's release files and image in the formats the
// Sigstore ecosystem verifies, with sigstore-go, and verifies them.
//
//   - A file is signed into a Sigstore bundle (protobuf-specs bundle v0.3
//     JSON, written beside it as <file>.sigstore.json): what `cosign
//     verify-blob --bundle` and sigstore-go read.
//   - An in-toto statement (the SLSA provenance) is signed into a bundle
//     holding a DSSE envelope of type application/vnd.in-toto+json: what
//     `cosign verify-blob-attestation --new-bundle-format`, `gh attestation
//     verify` and slsa-verifier read.
//   - An image is signed as cosign signs it: the "simple signing" payload
//     naming the manifest digest, in a signature manifest whose one layer
//     carries the signature (and, keyless, the certificate and the Rekor
//     bundle) as dev.cosignproject.cosign/dev.sigstore.cosign annotations,
//     stored under the tag sha256-<hex>.sig beside the image (an OCI layout
//     of its own in a release directory; the registry repository when
//     pushed), where `cosign verify` looks. No OCI referrer is written.
//
// Two ways to sign. With a key (KeyPair, from the PEM file CUZK_SIGNING_KEY
// names): bundles carry the key's hint, no certificate and no log entry;
// the verifier needs the public key. Keyless (FromEnv in GitHub Actions, or
// with SIGSTORE_ID_TOKEN): a fresh key, a ten-minute Fulcio certificate for
// the OIDC identity (in a release workflow, the workflow file at its tag),
// and a Rekor entry for every signature that dates it inside the
// certificate's life; the verifier needs the identity and issuer and
// Sigstore's trusted root. signtest runs the keyless path end to end on
// sigstore-go's in-memory Sigstore, so tests verify real certificates and
// log entries with no network.
//
// A Signer and a Verifier are safe for concurrent use; neither keeps
// files. Errors callers act on are ErrNoSignature (absent) and
// ErrBadSignature (present and wrong: the key, the identity, the content).
package sign
