package release

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx/v2/common"
	spdx "github.com/spdx/tools-golang/spdx/v2/v2_3"
	"github.com/spdx/tools-golang/spdxlib"

	"github.com/cuzk-dev/cuzk/ci/debian"
	"github.com/cuzk-dev/cuzk/cuda"
)

// SBOM element identifiers (SPDXRef-<id>) of the fixed packages.
const (
	sbomArchive = "Archive"
	sbomImage   = "Image"
	sbomNvcc    = "CUDA-nvcc"
)

// Facts are what the SBOM and the provenance state about a release beyond
// its files: where it came from and what built it.
type Facts struct {
	// Commit is the source commit (40 hex), or "" when unknown.
	Commit string
	// Repository is the source repository's URI.
	Repository string
	// Manifest is the bundle's kernel manifest.
	Manifest cuda.Manifest
	// Base lists the Debian packages of the image's base layer.
	Base []debian.Package
	// Image is the OCI image manifest's descriptor.
	Image v1.Descriptor
	// Pins are the toolchain pins as "key value" pairs (Go, CUDA, images).
	Pins map[string]string
}

var spdxIDChars = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

func spdxID(kind, name string) common.ElementID {
	return common.ElementID(kind + "-" + strings.Trim(spdxIDChars.ReplaceAllString(name, "-"), "-"))
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func purl(ref string) []*spdx.PackageExternalReference {
	return []*spdx.PackageExternalReference{{Category: "PACKAGE-MANAGER", RefType: "purl", Locator: ref}}
}

// SBOM returns the release's SPDX 2.3 document as JSON: the archive and
// the image (described by the document), each binary with the Go modules
// of its build info, the kernels with their ActionIDs and fatbin hashes,
// the CUDA compiler that built them, and the Debian packages of the base
// layer. Equal inputs give equal bytes (the creation time is the release
// epoch, the namespace derives from the archive's hash).
func (b Bundle) SBOM(f Facts) ([]byte, error) {
	archive, err := os.ReadFile(b.Archive)
	if err != nil {
		return nil, fmt.Errorf("release sbom: %w", err)
	}
	name := b.Options.Name()
	doc := &spdx.Document{
		SPDXVersion: spdx.Version, DataLicense: spdx.DataLicense, SPDXIdentifier: "DOCUMENT",
		DocumentName:      name,
		DocumentNamespace: "https://github.com/cuzk-dev/cuzk/spdx/" + name + "-" + sha256Hex(archive)[:16],
		CreationInfo: &spdx.CreationInfo{Created: b.Options.Epoch.UTC().Format("2006-01-02T15:04:05Z"),
			Creators: []common.Creator{{CreatorType: "Tool", Creator: "cuzk-release"}}},
	}
	pkgs := map[common.ElementID]*spdx.Package{}
	rel := func(a common.ElementID, kind string, bs ...common.ElementID) {
		for _, x := range bs {
			doc.Relationships = append(doc.Relationships, &spdx.Relationship{
				RefA: common.MakeDocElementID("", string(a)), RefB: common.MakeDocElementID("", string(x)), Relationship: kind})
		}
	}
	add := func(p *spdx.Package) common.ElementID {
		if p.PackageDownloadLocation == "" {
			p.PackageDownloadLocation = "NOASSERTION"
		}
		if _, ok := pkgs[p.PackageSPDXIdentifier]; !ok {
			pkgs[p.PackageSPDXIdentifier] = p
		}
		return p.PackageSPDXIdentifier
	}
	checksum := func(hexSum string) []common.Checksum {
		return []common.Checksum{{Algorithm: common.SHA256, Value: hexSum}}
	}
	arch := add(&spdx.Package{PackageName: name + ".tar.gz", PackageSPDXIdentifier: sbomArchive,
		PackageVersion: b.Options.Version, PackageFileName: name + ".tar.gz", PackageChecksums: checksum(sha256Hex(archive)),
		PrimaryPackagePurpose: "ARCHIVE", PackageDownloadLocation: f.sourceLocation()})
	img := add(&spdx.Package{PackageName: "cuzk image", PackageSPDXIdentifier: sbomImage, PackageVersion: b.Options.Version,
		PackageChecksums: checksum(f.Image.Digest.Hex), PrimaryPackagePurpose: "CONTAINER",
		PackageComment: "checksum: the OCI image manifest digest"})
	rel("DOCUMENT", "DESCRIBES", arch, img)

	nvcc := add(&spdx.Package{PackageName: "nvcc", PackageSPDXIdentifier: sbomNvcc, PackageVersion: f.Manifest.NvccBuild,
		PackageSupplier: &common.Supplier{SupplierType: "Organization", Supplier: "NVIDIA"},
		PackageComment:  "the pinned CUDA compiler; toolchain identity " + f.Manifest.Toolchain + pinsComment(f.Manifest.Pins)})
	var kernels []common.ElementID
	for _, k := range f.Manifest.Kernels {
		id := add(&spdx.Package{PackageName: "kernel " + k.Name, PackageSPDXIdentifier: spdxID("Kernel", k.Name),
			PackageFileName: "cuda/fatbin/" + k.Name + ".fatbin", PackageChecksums: checksum(k.FatbinSHA256),
			PackageSourceInfo: "built from " + k.Source + " (source closure " + k.ClosureHash + ")",
			PackageComment:    "ActionID " + k.ActionID, PrimaryPackagePurpose: "FIRMWARE"})
		kernels = append(kernels, id)
		rel(nvcc, "BUILD_TOOL_OF", id)
	}
	for _, file := range b.Files {
		bin, ok := strings.CutPrefix(file.Path, "bin/")
		if !ok {
			continue
		}
		id := add(&spdx.Package{PackageName: bin, PackageSPDXIdentifier: spdxID("Binary", bin), PackageVersion: b.Options.Version,
			PackageFileName: file.Path, PackageChecksums: checksum(sha256Hex(file.Data)), PrimaryPackagePurpose: "APPLICATION"})
		rel(arch, "CONTAINS", id)
		rel(img, "CONTAINS", id)
		if m := manifestBytes(b); len(m) > 0 && bytes.Contains(file.Data, m) {
			rel(id, "CONTAINS", kernels...)
		}
		bi, err := buildinfo.Read(bytes.NewReader(file.Data))
		if err != nil {
			return nil, fmt.Errorf("release sbom: build info of %s: %w", file.Path, err)
		}
		goID := add(&spdx.Package{PackageName: "go", PackageSPDXIdentifier: spdxID("Go", bi.GoVersion), PackageVersion: bi.GoVersion,
			PackageExternalReferences: purl("pkg:golang/stdlib@" + bi.GoVersion)})
		rel(goID, "BUILD_TOOL_OF", id)
		for _, m := range bi.Deps {
			if m.Replace != nil {
				m = m.Replace
			}
			mid := add(&spdx.Package{PackageName: m.Path, PackageSPDXIdentifier: spdxID("Go", m.Path+"@"+m.Version),
				PackageVersion: m.Version, PackageExternalReferences: purl("pkg:golang/" + m.Path + "@" + m.Version),
				PackageComment: "go.sum " + m.Sum, PrimaryPackagePurpose: "LIBRARY"})
			rel(id, "CONTAINS", mid)
		}
	}
	for _, p := range f.Base {
		id := add(&spdx.Package{PackageName: p.Name, PackageSPDXIdentifier: spdxID("Deb", p.Name), PackageVersion: p.Version,
			PackageFileName: p.FileName(), PackageChecksums: checksum(p.SHA256), PrimaryPackagePurpose: "OPERATING-SYSTEM",
			PackageSupplier:           &common.Supplier{SupplierType: "Organization", Supplier: "Debian"},
			PackageExternalReferences: purl("pkg:deb/debian/" + p.Name + "@" + p.Version + "?arch=" + p.Arch + "&distro=debian-12")})
		rel(img, "CONTAINS", id)
	}
	ids := make([]string, 0, len(pkgs))
	for id := range pkgs {
		ids = append(ids, string(id))
	}
	sort.Strings(ids)
	for _, id := range ids {
		doc.Packages = append(doc.Packages, pkgs[common.ElementID(id)])
	}
	if err := spdxlib.ValidateDocument(doc); err != nil {
		return nil, fmt.Errorf("release sbom: %w", err)
	}
	var buf bytes.Buffer
	if err := spdxjson.Write(doc, &buf, spdxjson.Indent("  "), spdxjson.EscapeHTML(false)); err != nil {
		return nil, fmt.Errorf("release sbom: %w", err)
	}
	return buf.Bytes(), nil
}

func pinsComment(p *cuda.BuildPins) string {
	if p == nil {
		return ""
	}
	return fmt.Sprintf("; cuda %s, host compiler %s, sass %v, ptx %v, flags %v, defines %v, build image %s",
		p.CUDARelease, p.HostCompiler, p.SASS, p.PTX, p.Flags, p.Defines, p.BuildImage)
}

func (f Facts) sourceLocation() string {
	if f.Repository == "" || f.Commit == "" {
		return "NOASSERTION"
	}
	return "git+" + f.Repository + "@" + f.Commit
}

// manifestBytes returns the bundle's kernel manifest file, or nil.
func manifestBytes(b Bundle) []byte {
	for _, f := range b.Files {
		if f.Path == KernelManifest {
			return f.Data
		}
	}
	return nil
}
