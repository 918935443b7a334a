package release

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"fmt"
	"github.com/cuzk-dev/cuzk/cuda/manifest"
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
	"github.com/cuzk-dev/cuzk/ci/oci"
)

// SBOM element identifiers (SPDXRef-<id>) of the fixed packages.
const (
	sbomArchive = "Archive"
	sbomImage   = "Image"
	sbomNvcc    = "CUDA-nvcc"
)

// License is cuzk's licence as an SPDX expression: Apache-2.0 or MIT at
// the user's choice, the Filecoin ecosystem's convention. The repository's
// LICENSE names it; LICENSE-APACHE and LICENSE-MIT hold the texts.
const License = "Apache-2.0 OR MIT"

// LicenseFiles are the licence files a bundle carries at its root.
var LicenseFiles = []string{"LICENSE", "LICENSE-APACHE", "LICENSE-MIT"}

// noAssertion is SPDX's "not stated" for licences, copyright and supplier.
const noAssertion = "NOASSERTION"

// Suppliers named in the SBOM.
var (
	supplierCuzk   = &common.Supplier{SupplierType: "Organization", Supplier: "cuzk-dev"}
	supplierGo     = &common.Supplier{SupplierType: "Organization", Supplier: "Google LLC"}
	supplierDebian = &common.Supplier{SupplierType: "Organization", Supplier: "Debian"}
	supplierNVIDIA = &common.Supplier{SupplierType: "Organization", Supplier: "NVIDIA"}
)

// ours marks p as one of cuzk's own packages: cuzk-dev supplies it under
// License.
func ours(p *spdx.Package) *spdx.Package {
	p.PackageSupplier, p.PackageLicenseDeclared = supplierCuzk, License
	return p
}

// Facts are what the SBOM and the provenance state about a release beyond
// its files: where it came from and what built it.
type Facts struct {
	// Commit is the source commit (40 hex), or "" when unknown.
	Commit string
	// Repository is the source repository's URI.
	Repository string
	// Manifest is the bundle's kernel manifest.
	Manifest manifest.Manifest
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

// sbomDoc collects packages (each once, by id) and relationships.
type sbomDoc struct {
	doc  *spdx.Document
	pkgs map[common.ElementID]*spdx.Package
}

func (d *sbomDoc) add(p *spdx.Package) common.ElementID {
	// Fields SPDX wants stated: NOASSERTION where the release does not
	// know (a Go module's licence would need its source scanned).
	for _, f := range []*string{&p.PackageDownloadLocation, &p.PackageLicenseConcluded, &p.PackageLicenseDeclared, &p.PackageCopyrightText} {
		if *f == "" {
			*f = noAssertion
		}
	}
	if p.PackageSupplier == nil {
		p.PackageSupplier = &common.Supplier{Supplier: noAssertion}
	}
	if _, ok := d.pkgs[p.PackageSPDXIdentifier]; !ok {
		d.pkgs[p.PackageSPDXIdentifier] = p
	}
	return p.PackageSPDXIdentifier
}

func (d *sbomDoc) rel(a common.ElementID, kind string, bs ...common.ElementID) {
	for _, x := range bs {
		d.doc.Relationships = append(d.doc.Relationships, &spdx.Relationship{
			RefA: common.MakeDocElementID("", string(a)), RefB: common.MakeDocElementID("", string(x)), Relationship: kind})
	}
}

func checksum(hexSum string) []common.Checksum {
	return []common.Checksum{{Algorithm: common.SHA256, Value: hexSum}}
}

// SBOM returns the release's SPDX 2.3 document as JSON: the archive and
// the image (described by the document), each binary with the Go modules
// of its build info, the kernels with their ActionIDs and fatbin hashes,
// the CUDA compiler that built them, and the Debian packages of the base
// layer. The document is validated (spdxlib). Equal inputs give equal bytes
// (the creation time is the release epoch, the namespace derives from the
// archive's hash).
func (b Bundle) SBOM(f Facts) ([]byte, error) {
	archive, err := os.ReadFile(b.Archive)
	if err != nil {
		return nil, fmt.Errorf("release sbom: %w", err)
	}
	name := b.Options.Name()
	d := &sbomDoc{pkgs: map[common.ElementID]*spdx.Package{}, doc: &spdx.Document{
		SPDXVersion: spdx.Version, DataLicense: spdx.DataLicense, SPDXIdentifier: "DOCUMENT",
		DocumentName:      name,
		DocumentNamespace: "https://github.com/cuzk-dev/cuzk/spdx/" + name + "-" + sha256Hex(archive)[:16],
		CreationInfo: &spdx.CreationInfo{Created: b.Options.Epoch.UTC().Format("2006-01-02T15:04:05Z"),
			Creators: []common.Creator{{CreatorType: "Tool", Creator: "cuzk-release"}}},
	}}
	arch := d.add(ours(&spdx.Package{PackageName: name + ".tar.gz", PackageSPDXIdentifier: sbomArchive,
		PackageVersion: b.Options.Version, PackageFileName: name + ".tar.gz", PackageChecksums: checksum(sha256Hex(archive)),
		PrimaryPackagePurpose: "ARCHIVE", PackageDownloadLocation: f.sourceLocation()}))
	img := d.add(ours(&spdx.Package{PackageName: "cuzk image", PackageSPDXIdentifier: sbomImage, PackageVersion: b.Options.Version,
		PackageChecksums: checksum(f.Image.Digest.Hex), PrimaryPackagePurpose: "CONTAINER",
		PackageComment: "checksum: the OCI image manifest digest"}))
	d.rel("DOCUMENT", "DESCRIBES", arch, img)
	kernels := d.kernels(f.Manifest)
	for _, file := range b.Files {
		if strings.HasPrefix(file.Path, "bin/") {
			if err := d.binary(b, file, kernels, arch, img); err != nil {
				return nil, err
			}
		}
	}
	for _, p := range f.Base {
		id := d.add(&spdx.Package{PackageName: p.Name, PackageSPDXIdentifier: spdxID("Deb", p.Name), PackageVersion: p.Version,
			PackageFileName: p.FileName(), PackageChecksums: checksum(p.SHA256), PrimaryPackagePurpose: "OPERATING_SYSTEM",
			PackageSupplier:           supplierDebian,
			PackageExternalReferences: purl("pkg:deb/debian/" + p.Name + "@" + p.Version + "?arch=" + p.Arch + "&distro=debian-12")})
		d.rel(img, "CONTAINS", id)
	}
	return d.encode()
}

// kernels adds the CUDA compiler and each kernel it built.
func (d *sbomDoc) kernels(m manifest.Manifest) []common.ElementID {
	nvcc := d.add(&spdx.Package{PackageName: "nvcc", PackageSPDXIdentifier: sbomNvcc, PackageVersion: m.NvccBuild,
		PackageSupplier: supplierNVIDIA,
		PackageComment:  "the pinned CUDA compiler; toolchain identity " + m.Toolchain + pinsComment(m.Pins)})
	var ids []common.ElementID
	for _, k := range m.Kernels {
		id := d.add(ours(&spdx.Package{PackageName: "kernel " + k.Name, PackageSPDXIdentifier: spdxID("Kernel", k.Name),
			PackageFileName: "cuda/fatbin/" + k.Name + ".fatbin", PackageChecksums: checksum(k.FatbinSHA256),
			PackageSourceInfo: kernelSourceInfo(k),
			PackageComment:    "ActionID " + k.ActionID, PrimaryPackagePurpose: "FIRMWARE"}))
		ids = append(ids, id)
		d.rel(nvcc, "BUILD_TOOL_OF", id)
	}
	return ids
}

// binary adds one binary, the Go that built it and the modules of its
// build info; it contains the kernels when it embeds the bundle's manifest.
func (d *sbomDoc) binary(b Bundle, file oci.File, kernels []common.ElementID, arch, img common.ElementID) error {
	bi, err := buildinfo.Read(bytes.NewReader(file.Data))
	if err != nil {
		return fmt.Errorf("release sbom: build info of %s: %w", file.Path, err)
	}
	bin := strings.TrimPrefix(file.Path, "bin/")
	id := d.add(ours(&spdx.Package{PackageName: bin, PackageSPDXIdentifier: spdxID("Binary", bin), PackageVersion: b.Options.Version,
		PackageFileName: file.Path, PackageChecksums: checksum(sha256Hex(file.Data)), PrimaryPackagePurpose: "APPLICATION",
		PackageSourceInfo: binarySourceInfo(bi)}))
	d.rel(arch, "CONTAINS", id)
	d.rel(img, "CONTAINS", id)
	if m := manifestBytes(b); len(m) > 0 && bytes.Contains(file.Data, m) {
		d.rel(id, "CONTAINS", kernels...)
	}
	goID := d.add(&spdx.Package{PackageName: "go", PackageSPDXIdentifier: spdxID("Go", bi.GoVersion), PackageVersion: bi.GoVersion,
		PackageSupplier: supplierGo, PackageLicenseDeclared: "BSD-3-Clause", PrimaryPackagePurpose: "LIBRARY",
		PackageExternalReferences: purl("pkg:golang/stdlib@" + bi.GoVersion)})
	d.rel(goID, "BUILD_TOOL_OF", id)
	for _, m := range bi.Deps {
		if m.Replace != nil {
			m = m.Replace
		}
		mid := d.add(&spdx.Package{PackageName: m.Path, PackageSPDXIdentifier: spdxID("Go", m.Path+"@"+m.Version),
			PackageVersion: m.Version, PackageExternalReferences: purl("pkg:golang/" + m.Path + "@" + m.Version),
			PackageComment: goSumComment + m.Sum, PrimaryPackagePurpose: "LIBRARY"})
		d.rel(id, "CONTAINS", mid)
	}
	return nil
}

// goSumComment starts a Go module package's comment; its go.sum hash follows.
const goSumComment = "go.sum "

// encode sorts the packages by id, validates and renders the document.
func (d *sbomDoc) encode() ([]byte, error) {
	ids := make([]string, 0, len(d.pkgs))
	for id := range d.pkgs {
		ids = append(ids, string(id))
	}
	sort.Strings(ids)
	for _, id := range ids {
		d.doc.Packages = append(d.doc.Packages, d.pkgs[common.ElementID(id)])
	}
	if err := spdxlib.ValidateDocument(d.doc); err != nil {
		return nil, fmt.Errorf("release sbom: %w", err)
	}
	var buf bytes.Buffer
	if err := spdxjson.Write(d.doc, &buf, spdxjson.Indent("  "), spdxjson.EscapeHTML(false)); err != nil {
		return nil, fmt.Errorf("release sbom: %w", err)
	}
	if err := ValidateSBOM(buf.Bytes()); err != nil {
		return nil, fmt.Errorf("release sbom: %w", err)
	}
	return buf.Bytes(), nil
}

func pinsComment(p *manifest.BuildPins) string {
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
