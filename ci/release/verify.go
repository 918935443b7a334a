package release

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/cuzk-dev/cuzk/cuda/manifest"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	"github.com/sigstore/sigstore-go/pkg/root"
	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx/v2/common"
	spdx "github.com/spdx/tools-golang/spdx/v2/v2_3"
	"github.com/spdx/tools-golang/spdxlib"

	"github.com/cuzk-dev/cuzk/ci/oci"
	"github.com/cuzk-dev/cuzk/ci/sign"
	envmap "github.com/cuzk-dev/cuzk/internal/environ"
)

// Verified is what Verify found in a release directory.
type Verified struct {
	// Name is the bundle name (cuzk-<version>-<os>-<arch>).
	Name string
	// Files are the archive's files without the name prefix, by path.
	Files map[string][]byte
	// Manifest is the bundle's kernel manifest.
	Manifest manifest.Manifest
	// ImageDigest is the image manifest's digest ("sha256:...").
	ImageDigest string
	// Commit, Source ("git+<repository>@<commit>", or NOASSERTION) and
	// Version come from the provenance, checked against each other, the
	// archive's name and the binaries.
	Commit, Source, Version string
	// Epoch is the provenance's SOURCE_DATE_EPOCH.
	Epoch int64
	// Signer is who signed (the certificate identity or the key), set by
	// VerifyRelease when it checked signatures.
	Signer string
}

// Verify re-checks a release directory written by Make and returns the
// first damage it finds, naming the file and, inside the SBOM and the
// provenance, the field:
//
//   - SHA256SUMS against every file it lists, and no file in dir that it
//     does not list (a leftover of another release);
//   - the archive's own SHA256SUMS, the licence files, and that the
//     binaries embed exactly the bundle's kernel manifest (the daemon must
//     embed one);
//   - every blob of the OCI layout against its descriptor (naming the
//     blob), then the layout (diff_ids) and that the image's payload holds
//     the bundle's files;
//   - the provenance: its subjects match the files, its commit fields
//     (externalParameters.commit and .source, the gitCommit dependency)
//     agree with each other and with the binaries' vcs.revision where they
//     carry one, its version and platform name the archive, its kernels
//     are the manifest's;
//   - the SBOM: valid against the official SPDX 2.3 JSON schema, its
//     checksums match the files, each binary's Go modules and Go release
//     equal its embedded build info (path, version, go.sum hash), its
//     kernels equal the manifest (ActionIDs included).
//
// So a forger who edits the SBOM or provenance and regenerates SHA256SUMS
// is still caught. It only reads dir.
func Verify(dir string) (Verified, error) {
	var v Verified
	listed, err := checkSums(dir)
	if err != nil {
		return v, err
	}
	var archive string
	for name := range listed {
		if strings.HasSuffix(name, ".tar.gz") {
			archive = name
		}
	}
	if archive == "" {
		return v, fmt.Errorf("verify %s: %s lists no .tar.gz archive", dir, SumsFile)
	}
	v.Name = strings.TrimSuffix(archive, ".tar.gz")
	if err := checkUnlisted(dir, listed); err != nil {
		return v, err
	}
	for _, want := range []string{v.Name + SBOMSuffix, v.Name + ProvenanceSuffix} {
		if _, ok := listed[want]; !ok {
			return v, fmt.Errorf("verify %s: %s does not list %s", dir, SumsFile, want)
		}
	}
	if v.Files, err = readBundle(filepath.Join(dir, archive), v.Name); err != nil {
		return v, err
	}
	if v.Manifest, err = manifest.Decode(v.Files[KernelManifest]); err != nil {
		return v, fmt.Errorf("verify %s: %s: %w", archive, KernelManifest, err)
	}
	if err := checkEmbedded(v.Files); err != nil {
		return v, fmt.Errorf("verify %s: %w", archive, err)
	}
	for _, lic := range LicenseFiles {
		if _, ok := v.Files[lic]; !ok {
			return v, fmt.Errorf("verify %s: no %s in the bundle", archive, lic)
		}
	}
	bis, err := readBuildInfo(v.Files)
	if err != nil {
		return v, fmt.Errorf("verify %s: %w", archive, err)
	}
	if err := checkBlobs(filepath.Join(dir, ImageDir)); err != nil {
		return v, err
	}
	c, err := oci.Verify(filepath.Join(dir, ImageDir))
	if err != nil {
		return v, err
	}
	v.ImageDigest = c.Descriptor.Digest.String()
	if err := checkPayload(c, v.Files); err != nil {
		return v, fmt.Errorf("verify %s: %w", ImageDir, err)
	}
	if err := checkProvenance(dir, &v, listed[archive], bis); err != nil {
		return v, err
	}
	if err := checkImageLabels(c.Config.Config.Labels, v); err != nil {
		return v, fmt.Errorf("verify %s: %w", ImageDir, err)
	}
	if err := checkSBOM(dir, v, listed[archive], bis); err != nil {
		return v, err
	}
	return v, nil
}

// checkSums verifies dir/SHA256SUMS and returns name → hex sha256.
func checkSums(dir string) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, SumsFile))
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", dir, err)
	}
	listed, err := parseSums(b)
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", filepath.Join(dir, SumsFile), err)
	}
	for name, want := range listed {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("verify %s: %w", name, err)
		}
		if got := sha256Hex(data); got != want {
			return nil, fmt.Errorf("verify %s: sha256 %s, %s lists %s", name, got, SumsFile, want)
		}
	}
	return listed, nil
}

func parseSums(b []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 || name == "" || path.Clean(name) != name || path.IsAbs(name) || strings.HasPrefix(name, "../") {
			return nil, fmt.Errorf("line %d: %q is not \"<sha256>  <name>\"", n, sc.Text())
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("line %d: %s listed twice", n, name)
		}
		out[name] = sum
	}
	if len(out) == 0 {
		return nil, errors.New("no entries")
	}
	return out, sc.Err()
}

// readBundle reads the archive's files (without the name/ prefix) and
// checks its inner SHA256SUMS covers exactly the other files.
func readBundle(path, name string) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", filepath.Base(path), err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", filepath.Base(path), err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("verify %s: %w", filepath.Base(path), err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		rel, ok := strings.CutPrefix(h.Name, name+"/")
		if !ok {
			return nil, fmt.Errorf("verify %s: entry %s outside %s/", filepath.Base(path), h.Name, name)
		}
		if files[rel], err = io.ReadAll(tr); err != nil {
			return nil, fmt.Errorf("verify %s: %s: %w", filepath.Base(path), h.Name, err)
		}
	}
	inner, err := parseSums(files[SumsFile])
	if err != nil {
		return nil, fmt.Errorf("verify %s: %s/%s: %w", filepath.Base(path), name, SumsFile, err)
	}
	for rel, data := range files {
		if rel == SumsFile {
			continue
		}
		if want, ok := inner[rel]; !ok {
			return nil, fmt.Errorf("verify %s: %s is not in the bundle's %s", filepath.Base(path), rel, SumsFile)
		} else if got := sha256Hex(data); got != want {
			return nil, fmt.Errorf("verify %s: %s: sha256 %s, the bundle's %s lists %s", filepath.Base(path), rel, got, SumsFile, want)
		}
		delete(inner, rel)
	}
	for rel := range inner {
		return nil, fmt.Errorf("verify %s: the bundle's %s lists %s, which is missing", filepath.Base(path), SumsFile, rel)
	}
	return files, nil
}

// manifestMarker appears in an encoded kernel manifest (manifest.Manifest.Encode)
// and not in a binary's type information.
var manifestMarker = []byte(`"fatbin_sha256": "`)

// KernelBinaries are the release binaries that import the cuda package and
// so must embed the bundle's kernel manifest. The cuda package sits in the
// main module, so a binary's build info (modules, not packages) cannot say
// which ones do; TestKernelBinariesImportCuda keeps this list equal to
// `go list -deps` of DefaultPackages.
var KernelBinaries = []string{DaemonBinary, "cuzk-bench"}

// checkEmbedded fails unless the daemon binary is there, every binary of
// KernelBinaries in the bundle embeds the bundle's manifest byte for byte,
// and no other binary embeds a kernel manifest that is not the bundle's.
// A binary outside KernelBinaries (the client cuzk) may embed none.
func checkEmbedded(files map[string][]byte) error {
	if _, ok := files["bin/"+DaemonBinary]; !ok {
		return fmt.Errorf("no bin/%s", DaemonBinary)
	}
	man := files[KernelManifest]
	for rel, bin := range files {
		if !strings.HasPrefix(rel, "bin/") || bytes.Contains(bin, man) {
			continue
		}
		if slices.Contains(KernelBinaries, strings.TrimPrefix(rel, "bin/")) || bytes.Contains(bin, manifestMarker) {
			return fmt.Errorf("%s does not embed the bundle's %s (stale kernels?)", rel, KernelManifest)
		}
	}
	return nil
}

// checkPayload compares the image's files where imagePath puts them with
// the bundle's.
func checkPayload(c oci.Checked, files map[string][]byte) error {
	want := map[string][]byte{}
	for rel, data := range files {
		if p, ok := imagePath(rel); ok {
			want[strings.TrimPrefix(p, "/")] = data
		}
	}
	rc := mutate.Extract(c.Image)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read image files: %w", err)
		}
		exp, ok := want[h.Name]
		if !ok {
			continue
		}
		got, err := io.ReadAll(tr)
		if err != nil {
			return fmt.Errorf("read image file /%s: %w", h.Name, err)
		}
		if !bytes.Equal(got, exp) {
			return fmt.Errorf("image file /%s differs from the bundle's", h.Name)
		}
		delete(want, h.Name)
	}
	for name := range want {
		return fmt.Errorf("image lacks /%s", name)
	}
	return nil
}

// checkProvenance matches every subject with the files and fills in
// v.Commit, v.Version and v.Epoch.
func checkProvenance(dir string, v *Verified, archiveSHA string, bis map[string]*debug.BuildInfo) error {
	name := v.Name + ProvenanceSuffix
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return fmt.Errorf("verify %s: %w", name, err)
	}
	st, pred, err := ReadStatement(b)
	if err != nil {
		return fmt.Errorf("verify %s: %w", name, err)
	}
	want := subjectsOf(v, archiveSHA)
	for _, s := range st.GetSubject() {
		exp, ok := want[s.GetName()]
		if !ok {
			return fmt.Errorf("verify %s: subject %q names no release file", name, s.GetName())
		}
		if got := s.GetDigest()["sha256"]; got != exp {
			return fmt.Errorf("verify %s: subject %s: sha256 %s, the file has %s", name, s.GetName(), got, exp)
		}
		delete(want, s.GetName())
	}
	for missing := range want {
		return fmt.Errorf("verify %s: no subject for %s", name, missing)
	}
	ext := pred.GetBuildDefinition().GetExternalParameters().AsMap()
	if e, ok := ext["source_date_epoch"].(float64); ok {
		v.Epoch = int64(e)
	}
	if err := checkProvenanceMeaning(pred, v, bis); err != nil {
		return fmt.Errorf("verify %s: %w", name, err)
	}
	return nil
}

// subjectsOf returns subject name → expected hex sha256.
func subjectsOf(v *Verified, archiveSHA string) map[string]string {
	want := map[string]string{v.Name + ".tar.gz": archiveSHA, ImageSubject: strings.TrimPrefix(v.ImageDigest, "sha256:")}
	for rel, data := range v.Files {
		if strings.HasPrefix(rel, "bin/") {
			want[rel] = sha256Hex(data)
		}
	}
	return want
}

// sameKernels compares the SBOM's "kernel <name>" packages' sha256
// checksums with the manifest.
func sameKernels(got map[string]string, m manifest.Manifest) error {
	if len(got) != len(m.Kernels) {
		return fmt.Errorf("%d packages named \"kernel ...\", the bundle's manifest has %d kernels", len(got), len(m.Kernels))
	}
	for _, k := range m.Kernels {
		if got[k.Name] != k.FatbinSHA256 {
			return fmt.Errorf("package \"kernel %s\" checksums SHA256 %q, the bundle's manifest has %s", k.Name, got[k.Name], k.FatbinSHA256)
		}
	}
	return nil
}

// checkSBOM matches the SBOM's archive, image, binary and kernel checksums
// with the files.
func checkSBOM(dir string, v Verified, archiveSHA string, bis map[string]*debug.BuildInfo) error {
	name := v.Name + SBOMSuffix
	raw, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return fmt.Errorf("verify %s: %w", name, err)
	}
	if err := ValidateSBOM(raw); err != nil {
		return fmt.Errorf("verify %s: %w", name, err)
	}
	doc := &spdx.Document{}
	if err := spdxjson.ReadInto(bytes.NewReader(raw), doc); err != nil {
		return fmt.Errorf("verify %s: %w", name, err)
	}
	if doc.SPDXVersion != spdx.Version {
		return fmt.Errorf("verify %s: spdxVersion %q, want %q", name, doc.SPDXVersion, spdx.Version)
	}
	if err := spdxlib.ValidateDocument(doc); err != nil {
		return fmt.Errorf("verify %s: %w", name, err)
	}
	want := map[common.ElementID]string{sbomArchive: archiveSHA, sbomImage: strings.TrimPrefix(v.ImageDigest, "sha256:")}
	for rel, data := range v.Files {
		if bin, ok := strings.CutPrefix(rel, "bin/"); ok {
			want[spdxID("Binary", bin)] = sha256Hex(data)
		}
	}
	kernels := map[string]string{}
	for _, p := range doc.Packages {
		sum := ""
		for _, c := range p.PackageChecksums {
			if c.Algorithm == common.SHA256 {
				sum = c.Value
			}
		}
		if k, ok := strings.CutPrefix(p.PackageName, "kernel "); ok {
			kernels[k] = sum
		}
		if exp, ok := want[p.PackageSPDXIdentifier]; ok {
			if sum != exp {
				return fmt.Errorf("verify %s: package %s: sha256 %q, the file has %s", name, p.PackageName, sum, exp)
			}
			delete(want, p.PackageSPDXIdentifier)
		}
	}
	missing := make([]string, 0, len(want))
	for id := range want {
		missing = append(missing, string(id))
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		return fmt.Errorf("verify %s: no package for %s", name, strings.Join(missing, ", "))
	}
	if err := sameKernels(kernels, v.Manifest); err != nil {
		return fmt.Errorf("verify %s: %w", name, err)
	}
	x := indexSBOM(doc)
	for _, check := range []func() error{
		func() error { return checkSBOMSource(x, v) },
		func() error { return checkSBOMGo(x, bis) },
		func() error { return checkSBOMKernels(x, v) },
	} {
		if err := check(); err != nil {
			return fmt.Errorf("verify %s: %w", name, err)
		}
	}
	return nil
}

// checkUnlisted fails on a file in dir that SHA256SUMS does not list (the
// image layout, the signature bundles of SHA256SUMS and the files it
// lists, and the image signature layout aside): a leftover of another
// release must not pass as part of this one.
func checkUnlisted(dir string, listed map[string]string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("verify %s: %w", dir, err)
	}
	for _, e := range entries {
		if _, ok := listed[e.Name()]; ok || e.Name() == SumsFile || (e.Name() == ImageDir && e.IsDir()) {
			continue
		}
		if signed, ok := strings.CutSuffix(e.Name(), sign.BundleSuffix); ok && !e.IsDir() {
			if _, ok := listed[signed]; ok || signed == SumsFile {
				continue // a signature, checked by VerifySignatures
			}
		}
		if e.Name() == ImageSignatureDir && e.IsDir() {
			continue
		}
		return fmt.Errorf("verify %s: %s is not listed in %s (left from another release? `release` empties the directory first)", dir, e.Name(), SumsFile)
	}
	return nil
}

// Environment variables PolicyFromEnv reads: dist:verify's flags
// -key, -identity, -identityregexp, -issuer, -issuerregexp, -trustedroot
// and -unsigned, for workflows (whose steps pass no flags).
const (
	EnvVerifyKey            = "RELEASE_VERIFY_KEY"
	EnvVerifyIdentity       = "RELEASE_VERIFY_IDENTITY"
	EnvVerifyIdentityRegexp = "RELEASE_VERIFY_IDENTITY_REGEXP"
	EnvVerifyIssuer         = "RELEASE_VERIFY_ISSUER"
	EnvVerifyIssuerRegexp   = "RELEASE_VERIFY_ISSUER_REGEXP"
	EnvVerifyTrustedRoot    = "RELEASE_VERIFY_TRUSTED_ROOT"
	EnvVerifyUnsigned       = "RELEASE_VERIFY_UNSIGNED"
)

// ErrNoPolicy: VerifyRelease was given neither a verifier nor leave to
// skip signatures.
var ErrNoPolicy = errors.New("no -key or -identity/-issuer to check the signatures against (-unsigned skips them)")

// SignaturePolicy is what dist:verify trusts, as cosign's flags: a
// public key (Key, a PEM file) or a certificate identity (Identity or
// IdentityRegexp, with Issuer or IssuerRegexp) checked against Sigstore's
// public-good root (TUF) or the trusted_root.json TrustedRoot names.
// Unsigned skips the signature checks instead.
type SignaturePolicy struct {
	Key                      string
	Identity, IdentityRegexp string
	Issuer, IssuerRegexp     string
	TrustedRoot              string
	Unsigned                 bool
}

// PolicyFromEnv reads a SignaturePolicy from the RELEASE_VERIFY_*
// variables (RELEASE_VERIFY_UNSIGNED=1 for Unsigned).
func PolicyFromEnv(environ []string) SignaturePolicy {
	env := envmap.Map(environ)
	return SignaturePolicy{Key: env[EnvVerifyKey], Identity: env[EnvVerifyIdentity], IdentityRegexp: env[EnvVerifyIdentityRegexp],
		Issuer: env[EnvVerifyIssuer], IssuerRegexp: env[EnvVerifyIssuerRegexp], TrustedRoot: env[EnvVerifyTrustedRoot],
		Unsigned: env[EnvVerifyUnsigned] == "1" || env[EnvVerifyUnsigned] == "true"}
}

// Verifier builds the policy's verifier: nil for Unsigned. A policy with
// both a key and an identity, or Unsigned with either, is an error; an
// identity without TrustedRoot fetches Sigstore's public-good root.
func (p SignaturePolicy) Verifier() (*sign.Verifier, error) {
	byID := p.Identity != "" || p.IdentityRegexp != "" || p.Issuer != "" || p.IssuerRegexp != ""
	switch {
	case p.Unsigned && (p.Key != "" || byID):
		return nil, errors.New("verify: -unsigned and a -key or -identity contradict each other")
	case p.Unsigned:
		return nil, nil
	case p.Key != "" && byID:
		return nil, errors.New("verify: give -key or -identity/-issuer, not both")
	case p.Key != "":
		pub, err := sign.LoadPublicKey(p.Key)
		if err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		return sign.NewVerifier(sign.WithPublicKey(pub))
	case !byID:
		return nil, fmt.Errorf("verify: %w", ErrNoPolicy)
	}
	id := sign.Identity{Subject: p.Identity, SubjectRegexp: p.IdentityRegexp, Issuer: p.Issuer, IssuerRegexp: p.IssuerRegexp}
	var tm root.TrustedMaterial
	var err error
	if p.TrustedRoot != "" {
		tm, err = root.NewTrustedRootFromPath(p.TrustedRoot)
	} else {
		tm, err = sign.PublicGoodRoot()
	}
	if err != nil {
		return nil, fmt.Errorf("verify: trusted root: %w", err)
	}
	return sign.NewVerifier(sign.WithIdentity(id), sign.WithTrustedRoot(tm))
}

// VerifyRelease checks a release directory in the order that parses
// nothing a signer did not vouch for:
//
//  1. the signature over SHA256SUMS, against sv (the key or the identity),
//     before SHA256SUMS is even parsed;
//  2. the sums: every file SHA256SUMS lists has its sha256, and no other
//     file lies in dir;
//  3. the signature of every listed file, the signed provenance (its
//     statement against the file, the signer as builder) and the image's
//     signature over the digest the signed provenance names;
//  4. only then the archive, the image and the SBOM are parsed (Verify's
//     checks of bytes and meaning).
//
// So a forged file fails as a bad signature naming it, never as a parse
// or meaning error. A nil sv skips 1 and 3 when allowUnsigned is set, and
// fails with ErrNoPolicy otherwise.
func VerifyRelease(dir string, sv *sign.Verifier, allowUnsigned bool) (Verified, error) {
	if sv == nil && !allowUnsigned {
		return Verified{}, fmt.Errorf("verify %s: %w", dir, ErrNoPolicy)
	}
	if sv == nil {
		return Verify(dir)
	}
	signer, err := VerifySignatures(dir, sv)
	if err != nil {
		return Verified{}, err
	}
	v, err := Verify(dir)
	if err != nil {
		return v, err
	}
	v.Signer = signer
	return v, nil
}

// VerifySignatures checks the signatures of a release directory with sv
// and parses nothing before the signature that covers it (VerifyRelease's
// steps 1 to 3), naming the file and the reason on the first failure
// (sign.ErrNoSignature when absent, sign.ErrBadSignature when wrong): the
// bundle of SHA256SUMS over its raw bytes, then the sums, then the bundle
// of every file SHA256SUMS lists; for the provenance, that its DSSE bundle
// signs a statement with the file's subjects and build definition whose
// builder id is the signer's identity (BuilderID for a key); and the
// image's cosign signature in ImageSignatureDir over the image digest the
// signed provenance names. It returns who signed (the certificate
// identity, or the key's hint).
func VerifySignatures(dir string, sv *sign.Verifier) (string, error) {
	if err := verifyBlobSignature(dir, SumsFile, sv); err != nil {
		return "", err
	}
	listed, err := checkSums(dir)
	if err != nil {
		return "", err
	}
	signer := sv.String()
	var imageDigest string
	for _, name := range slices.Sorted(maps.Keys(listed)) {
		if !strings.HasSuffix(name, ProvenanceSuffix) {
			if err := verifyBlobSignature(dir, name, sv); err != nil {
				return "", err
			}
			continue
		}
		who, digest, err := verifyProvenanceSignature(dir, name, listed, sv)
		if err != nil {
			return "", err
		}
		if who != "" {
			signer = who
		}
		imageDigest = digest
	}
	if imageDigest == "" {
		return "", fmt.Errorf("verify %s: %s lists no provenance (*%s) naming the image", dir, SumsFile, ProvenanceSuffix)
	}
	digest, err := v1.NewHash(imageDigest)
	if err != nil {
		return "", fmt.Errorf("verify %s: image digest: %w", ImageDir, err)
	}
	sig, err := sign.ReadSignatureLayout(filepath.Join(dir, ImageSignatureDir), digest)
	if errors.Is(err, sign.ErrNoSignature) {
		return "", fmt.Errorf("verify %s: %w: image %s is unsigned (dist:verify -unsigned skips signatures)", ImageSignatureDir, sign.ErrNoSignature, digest)
	}
	if err != nil {
		return "", fmt.Errorf("verify %s: %w", ImageSignatureDir, err)
	}
	if _, err := sv.VerifyImage(sig, digest); err != nil {
		return "", fmt.Errorf("verify %s: signature of image %s: %w", ImageSignatureDir, digest, err)
	}
	return signer, nil
}

// verifyBlobSignature checks dir/name's bundle over its bytes.
func verifyBlobSignature(dir, name string, sv *sign.Verifier) error {
	bname := name + sign.BundleSuffix
	raw, err := readBundleFile(dir, name)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return fmt.Errorf("verify %s: %w", name, err)
	}
	if _, err := sv.VerifyBlob(raw, data); err != nil {
		return fmt.Errorf("verify %s: signature of %s: %w", bname, name, err)
	}
	return nil
}

// readBundleFile reads name's signature bundle, failing with
// sign.ErrNoSignature where there is none.
func readBundleFile(dir, name string) ([]byte, error) {
	bname := name + sign.BundleSuffix
	raw, err := os.ReadFile(filepath.Join(dir, bname))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("verify %s: %w: %s is unsigned (dist:verify -unsigned skips signatures)", bname, sign.ErrNoSignature, name)
	}
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", bname, err)
	}
	return raw, nil
}

// verifyProvenanceSignature checks the provenance name's DSSE bundle (its
// subjects include the archive SHA256SUMS lists) and that it signs the
// file's statement with the signer as builder; it returns the
// certificate's identity ("" for a key) and the image digest the signed
// statement names.
func verifyProvenanceSignature(dir, name string, listed map[string]string, sv *sign.Verifier) (signer, imageDigest string, err error) {
	bname := name + sign.BundleSuffix
	raw, err := readBundleFile(dir, name)
	if err != nil {
		return "", "", err
	}
	archive, err := hex.DecodeString(listed[strings.TrimSuffix(name, ProvenanceSuffix)+".tar.gz"])
	if err != nil || len(archive) == 0 {
		return "", "", fmt.Errorf("verify %s: no archive for %s listed", SumsFile, name)
	}
	stmt, res, err := sv.VerifyStatement(raw, archive)
	if err != nil {
		return "", "", fmt.Errorf("verify %s: signed provenance of %s: %w", bname, name, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "", "", fmt.Errorf("verify %s: %w", name, err)
	}
	builder := BuilderID
	if c := res.Signature.Certificate; c != nil {
		builder, signer = c.SubjectAlternativeName, c.SubjectAlternativeName
	}
	if err := CheckSignedProvenance(stmt, data, builder); err != nil {
		return "", "", fmt.Errorf("verify %s: %w", bname, err)
	}
	st, pred, err := ReadStatement(stmt) // signed, and equal to the file's
	if err != nil {
		return "", "", fmt.Errorf("verify %s: %w", bname, err)
	}
	if c := res.Signature.Certificate; c != nil {
		commit, _ := pred.GetBuildDefinition().GetExternalParameters().AsMap()["commit"].(string) // its form: Verify's meaning checks
		if err := checkCertCommit(c, commit); err != nil {
			return "", "", fmt.Errorf("verify %s: %w", bname, err)
		}
	}
	for _, s := range st.GetSubject() {
		if s.GetName() == ImageSubject {
			return signer, "sha256:" + s.GetDigest()["sha256"], nil
		}
	}
	return "", "", fmt.Errorf("verify %s: the signed statement has no %q subject", bname, ImageSubject)
}

// checkCertCommit fails when a certificate names the commit its workflow
// ran at (Fulcio's source repository digest, set for GitHub Actions) and
// that is not the commit the provenance names: a release signed by a run
// of another commit.
func checkCertCommit(c *certificate.Summary, commit string) error {
	got := c.SourceRepositoryDigest
	if got == "" || commit == "" || strings.EqualFold(got, commit) {
		return nil
	}
	return fmt.Errorf("the certificate's source repository digest %s is not the provenance's commit %s", got, commit)
}

// SignatureFiles returns the signature bundles in dir to publish beside
// the release files (those of SHA256SUMS and of each file it lists that
// exist), sorted.
func SignatureFiles(dir string) ([]string, error) {
	listed, err := checkSums(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range append(slices.Sorted(maps.Keys(listed)), SumsFile) {
		p := filepath.Join(dir, name+sign.BundleSuffix)
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}
