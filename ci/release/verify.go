package release

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx/v2/common"
	spdx "github.com/spdx/tools-golang/spdx/v2/v2_3"
	"github.com/spdx/tools-golang/spdxlib"

	"github.com/cuzk-dev/cuzk/ci/oci"
	"github.com/cuzk-dev/cuzk/cuda"
)

// Verified is what Verify found in a release directory.
type Verified struct {
	// Name is the bundle name (cuzk-<version>-<os>-<arch>).
	Name string
	// Files are the archive's files without the name prefix, by path.
	Files map[string][]byte
	// Manifest is the bundle's kernel manifest.
	Manifest cuda.Manifest
	// ImageDigest is the image manifest's digest ("sha256:...").
	ImageDigest string
	// Commit, Source ("git+<repository>@<commit>", or NOASSERTION) and
	// Version come from the provenance, checked against each other, the
	// archive's name and the binaries.
	Commit, Source, Version string
	// Epoch is the provenance's SOURCE_DATE_EPOCH.
	Epoch int64
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
	if v.Manifest, err = cuda.DecodeManifest(v.Files[KernelManifest]); err != nil {
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

// manifestMarker appears in an encoded kernel manifest (cuda.Manifest.Encode)
// and not in a binary's type information.
var manifestMarker = []byte(`"fatbin_sha256": "`)

// checkEmbedded fails unless the daemon binary embeds the bundle's manifest
// byte for byte, and when another binary embeds a kernel manifest that is
// not the bundle's.
func checkEmbedded(files map[string][]byte) error {
	if _, ok := files["bin/"+DaemonBinary]; !ok {
		return fmt.Errorf("no bin/%s", DaemonBinary)
	}
	man := files[KernelManifest]
	for rel, bin := range files {
		if !strings.HasPrefix(rel, "bin/") || bytes.Contains(bin, man) {
			continue
		}
		if rel == "bin/"+DaemonBinary || bytes.Contains(bin, manifestMarker) {
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
func sameKernels(got map[string]string, m cuda.Manifest) error {
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
// image layout aside): a leftover of another release must not pass as
// part of this one.
func checkUnlisted(dir string, listed map[string]string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("verify %s: %w", dir, err)
	}
	for _, e := range entries {
		if _, ok := listed[e.Name()]; ok || e.Name() == SumsFile || (e.Name() == ImageDir && e.IsDir()) {
			continue
		}
		return fmt.Errorf("verify %s: %s is not listed in %s (left from another release? `release` empties the directory first)", dir, e.Name(), SumsFile)
	}
	return nil
}
