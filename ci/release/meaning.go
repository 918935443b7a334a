package release

import (
	"bytes"
	gobuildinfo "debug/buildinfo"
	"errors"
	"fmt"
	"github.com/cuzk-dev/cuzk/cuda/manifest"
	"maps"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strings"

	slsa "github.com/in-toto/attestation/go/predicates/provenance/v1"
	"github.com/spdx/tools-golang/spdx/v2/common"
	spdx "github.com/spdx/tools-golang/spdx/v2/v2_3"

	"github.com/cuzk-dev/cuzk/ci/oci"
	"github.com/cuzk-dev/cuzk/internal/buildinfo"
)

// This file checks what the SBOM and the provenance say against what the
// bundle is: a forger who rewrites SHA256SUMS to match an edited SBOM or
// provenance must also change the binaries, and then the checksums in
// both documents disagree.

var commitHex = regexp.MustCompile(`^[0-9a-f]{40}$`)

// sortedBinaries returns the bundle's bin/* paths, sorted.
func sortedBinaries(files map[string][]byte) []string {
	var out []string
	for rel := range files {
		if strings.HasPrefix(rel, "bin/") {
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out
}

// readBuildInfo reads every binary's embedded Go build info.
func readBuildInfo(files map[string][]byte) (map[string]*debug.BuildInfo, error) {
	out := map[string]*debug.BuildInfo{}
	for _, rel := range sortedBinaries(files) {
		bi, err := gobuildinfo.Read(bytes.NewReader(files[rel]))
		if err != nil {
			return nil, fmt.Errorf("%s: build info: %w", rel, err)
		}
		out[rel] = bi
	}
	return out, nil
}

// goDeps returns a build info's modules by path, replacements applied as
// the SBOM records them.
func goDeps(bi *debug.BuildInfo) map[string]*debug.Module {
	out := map[string]*debug.Module{}
	for _, m := range bi.Deps {
		if m.Replace != nil {
			m = m.Replace
		}
		out[m.Path] = m
	}
	return out
}

// vcsRevision returns the build info's vcs.revision, or "".
func vcsRevision(bi *debug.BuildInfo) string {
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return ""
}

// checkProvenanceMeaning checks that the provenance's commit fields agree
// with each other and with the binaries' vcs.revision (when they carry
// one), that its version and platform name the archive, and that its
// kernels are the bundle manifest's, ActionIDs included. Errors name the
// field ("externalParameters.commit").
func checkProvenanceMeaning(pred *slsa.Provenance, v *Verified, bis map[string]*debug.BuildInfo) error {
	ext := pred.GetBuildDefinition().GetExternalParameters().AsMap()
	str := func(k string) (string, error) {
		s, ok := ext[k].(string)
		if !ok {
			return "", fmt.Errorf("externalParameters.%s is %T, want a string", k, ext[k])
		}
		return s, nil
	}
	var err error
	if v.Version, err = str("version"); err != nil {
		return err
	}
	if v.Commit, err = str("commit"); err != nil {
		return err
	}
	if v.Source, err = str("source"); err != nil {
		return err
	}
	platform, err := str("platform")
	if err != nil {
		return err
	}
	if want := "cuzk-" + v.Version + "-" + strings.ReplaceAll(platform, "/", "-"); want != v.Name {
		return fmt.Errorf("externalParameters.version %q and .platform %q name %s, the archive is %s.tar.gz", v.Version, platform, want, v.Name)
	}
	var gitDeps []string
	for i, d := range pred.GetBuildDefinition().GetResolvedDependencies() {
		g, ok := d.GetDigest()["gitCommit"]
		if !ok {
			continue
		}
		field := fmt.Sprintf("resolvedDependencies[%d]", i)
		gitDeps = append(gitDeps, field)
		if g != v.Commit {
			return fmt.Errorf("%s.digest.gitCommit %q, externalParameters.commit %q", field, g, v.Commit)
		}
		if d.GetUri() != v.Source {
			return fmt.Errorf("%s.uri %q, externalParameters.source %q", field, d.GetUri(), v.Source)
		}
	}
	switch {
	case v.Commit == "" && v.Source != noAssertion:
		return fmt.Errorf("externalParameters.source %q names a source, externalParameters.commit is empty", v.Source)
	case v.Commit == "" && len(gitDeps) > 0:
		return fmt.Errorf("%s has a gitCommit, externalParameters.commit is empty", gitDeps[0])
	case v.Commit != "" && !commitHex.MatchString(v.Commit):
		return fmt.Errorf("externalParameters.commit %q is not 40 lowercase hex digits", v.Commit)
	case v.Commit != "" && (!strings.HasPrefix(v.Source, "git+") || !strings.HasSuffix(v.Source, "@"+v.Commit)):
		return fmt.Errorf("externalParameters.source %q, want git+<repository>@%s (externalParameters.commit)", v.Source, v.Commit)
	case v.Commit != "" && len(gitDeps) != 1:
		return fmt.Errorf("resolvedDependencies: %d entries with a gitCommit, want 1 for externalParameters.commit %s", len(gitDeps), v.Commit)
	}
	for _, rel := range sortedBinaries(v.Files) {
		if rev := vcsRevision(bis[rel]); rev != "" && rev != v.Commit {
			return fmt.Errorf("externalParameters.commit %q, %s was built from vcs.revision %s", v.Commit, rel, rev)
		}
		if err := checkIdentity(rel, v.Files[rel], bis[rel], v.Version, v.Commit); err != nil {
			return err
		}
	}
	return checkProvenanceKernels(pred, v.Manifest)
}

// checkIdentity checks the version and commit a binary carries (its
// buildinfo stamp, found in its bytes) against the provenance's
// externalParameters.version and .commit. A binary of cuzk's module must
// carry exactly one stamp; another module's (a test fixture) may carry
// none. Errors name the binary and the field.
func checkIdentity(rel string, data []byte, bi *debug.BuildInfo, version, commit string) error {
	s, err := buildinfo.FromBinary(data)
	switch {
	case errors.Is(err, buildinfo.ErrNoStamp) && bi != nil && bi.Main.Path != buildinfo.Module:
		return nil
	case errors.Is(err, buildinfo.ErrNoStamp):
		return fmt.Errorf("%s: no embedded version and commit (a release build stamps them with -X %s)", rel, buildinfo.StampVar)
	case err != nil:
		return fmt.Errorf("%s: %w", rel, err)
	case s.Version != version:
		return fmt.Errorf("%s: embedded version %q, externalParameters.version %q", rel, s.Version, version)
	case s.Commit != commit:
		return fmt.Errorf("%s: embedded commit %q, externalParameters.commit %q", rel, s.Commit, commit)
	}
	return nil
}

// checkProvenanceKernels compares the "kernel <name>" dependencies with the
// manifest: digest, action_id and closure_hash.
func checkProvenanceKernels(pred *slsa.Provenance, m manifest.Manifest) error {
	want := map[string]manifest.Kernel{}
	for _, k := range m.Kernels {
		want[k.Name] = k
	}
	for i, d := range pred.GetBuildDefinition().GetResolvedDependencies() {
		name, ok := strings.CutPrefix(d.GetName(), "kernel ")
		if !ok {
			continue
		}
		field := fmt.Sprintf("resolvedDependencies[%d] (kernel %s)", i, name)
		k, ok := want[name]
		if !ok {
			return fmt.Errorf("%s: the bundle's manifest has no such kernel", field)
		}
		ann := d.GetAnnotations().AsMap()
		switch {
		case d.GetDigest()["sha256"] != k.FatbinSHA256:
			return fmt.Errorf("%s.digest.sha256 %q, the bundle's manifest has %s", field, d.GetDigest()["sha256"], k.FatbinSHA256)
		case ann["action_id"] != k.ActionID:
			return fmt.Errorf("%s.annotations.action_id %v, the bundle's manifest has %s", field, ann["action_id"], k.ActionID)
		case ann["closure_hash"] != k.ClosureHash:
			return fmt.Errorf("%s.annotations.closure_hash %v, the bundle's manifest has %s", field, ann["closure_hash"], k.ClosureHash)
		}
		delete(want, name)
	}
	for _, k := range m.Kernels {
		if _, missing := want[k.Name]; missing {
			return fmt.Errorf("resolvedDependencies: no kernel %s, the bundle's manifest has it", k.Name)
		}
	}
	return nil
}

// sbomIndex finds an SBOM's packages and relationships by id.
type sbomIndex struct {
	pkgs map[common.ElementID]*spdx.Package
	// out[a][kind] and in[b][kind] are the relationships a→b.
	out, in map[common.ElementID]map[string][]common.ElementID
}

func indexSBOM(doc *spdx.Document) sbomIndex {
	x := sbomIndex{pkgs: map[common.ElementID]*spdx.Package{},
		out: map[common.ElementID]map[string][]common.ElementID{}, in: map[common.ElementID]map[string][]common.ElementID{}}
	for _, p := range doc.Packages {
		x.pkgs[p.PackageSPDXIdentifier] = p
	}
	add := func(m map[common.ElementID]map[string][]common.ElementID, a common.ElementID, kind string, b common.ElementID) {
		if m[a] == nil {
			m[a] = map[string][]common.ElementID{}
		}
		m[a][kind] = append(m[a][kind], b)
	}
	for _, r := range doc.Relationships {
		a, b := r.RefA.ElementRefID, r.RefB.ElementRefID
		add(x.out, a, r.Relationship, b)
		add(x.in, b, r.Relationship, a)
	}
	return x
}

// purlOf returns a package's purl, or "".
func purlOf(p *spdx.Package) string {
	for _, r := range p.PackageExternalReferences {
		if r.RefType == "purl" {
			return r.Locator
		}
	}
	return ""
}

// pkgField names a package field in an error: `package SPDXRef-X versionInfo`.
func pkgField(p *spdx.Package, field string) string {
	return "package SPDXRef-" + string(p.PackageSPDXIdentifier) + " " + field
}

// checkSBOMGo checks, for every binary, that the Go modules its SBOM
// package CONTAINS are exactly those of its embedded build info (path,
// versionInfo, purl, go.sum hash in the comment), that the Go that built
// it is the build info's, and that its sourceInfo names its main package
// and module.
func checkSBOMGo(x sbomIndex, bis map[string]*debug.BuildInfo) error {
	for _, rel := range slices.Sorted(maps.Keys(bis)) {
		bi := bis[rel]
		bin := x.pkgs[spdxID("Binary", strings.TrimPrefix(rel, "bin/"))]
		if bin == nil {
			return fmt.Errorf("no package for %s", rel)
		}
		if want := binarySourceInfo(bi); bin.PackageSourceInfo != want {
			return fmt.Errorf("%s %q, %s's build info says %q", pkgField(bin, "sourceInfo"), bin.PackageSourceInfo, rel, want)
		}
		if err := checkSBOMGoTool(x, bin, rel, bi); err != nil {
			return err
		}
		got := map[string]*spdx.Package{}
		for _, id := range x.out[bin.PackageSPDXIdentifier]["CONTAINS"] {
			p := x.pkgs[id]
			if p == nil {
				return fmt.Errorf("relationship SPDXRef-%s CONTAINS SPDXRef-%s: no such package", bin.PackageSPDXIdentifier, id)
			}
			if !strings.HasPrefix(purlOf(p), "pkg:golang/") {
				continue
			}
			if prev, dup := got[p.PackageName]; dup {
				return fmt.Errorf("%s: contains Go module %s twice (SPDXRef-%s, SPDXRef-%s)", pkgField(bin, "relationships"), p.PackageName, prev.PackageSPDXIdentifier, id)
			}
			got[p.PackageName] = p
		}
		want := goDeps(bi)
		for _, path := range slices.Sorted(maps.Keys(want)) {
			m, p := want[path], got[path]
			if p == nil {
				return fmt.Errorf("%s's build info has Go module %s %s, the SBOM has no package for it that %s CONTAINS", rel, path, m.Version, rel)
			}
			delete(got, path)
			switch {
			case p.PackageVersion != m.Version:
				return fmt.Errorf("%s %q, %s's build info has %s %s", pkgField(p, "versionInfo"), p.PackageVersion, rel, path, m.Version)
			case purlOf(p) != "pkg:golang/"+path+"@"+m.Version:
				return fmt.Errorf("%s purl %q, %s's build info has %s %s", pkgField(p, "externalRefs"), purlOf(p), rel, path, m.Version)
			case p.PackageComment != goSumComment+m.Sum:
				return fmt.Errorf("%s %q, %s's build info has %s sum %s", pkgField(p, "comment"), p.PackageComment, rel, path, m.Sum)
			}
		}
		for _, path := range slices.Sorted(maps.Keys(got)) {
			return fmt.Errorf("%s %s: %s CONTAINS it, its build info has no module %s", pkgField(got[path], "name"), path, rel, path)
		}
	}
	return nil
}

// checkSBOMGoTool checks the Go package that is BUILD_TOOL_OF bin.
func checkSBOMGoTool(x sbomIndex, bin *spdx.Package, rel string, bi *debug.BuildInfo) error {
	var gos []*spdx.Package
	for _, id := range x.in[bin.PackageSPDXIdentifier]["BUILD_TOOL_OF"] {
		if p := x.pkgs[id]; p != nil && strings.HasPrefix(purlOf(p), "pkg:golang/stdlib@") {
			gos = append(gos, p)
		}
	}
	if len(gos) != 1 {
		return fmt.Errorf("%s: %d Go packages are BUILD_TOOL_OF it, want 1 (%s)", pkgField(bin, "relationships"), len(gos), bi.GoVersion)
	}
	if p := gos[0]; p.PackageVersion != bi.GoVersion || purlOf(p) != "pkg:golang/stdlib@"+bi.GoVersion {
		return fmt.Errorf("%s %q (purl %q), %s was built by %s", pkgField(p, "versionInfo"), p.PackageVersion, purlOf(p), rel, bi.GoVersion)
	}
	return nil
}

// binarySourceInfo is a binary package's sourceInfo: its main package and
// module from the build info.
func binarySourceInfo(bi *debug.BuildInfo) string {
	return "built from Go package " + bi.Path + " of module " + bi.Main.Path
}

// checkSBOMKernels checks that the SBOM's kernel packages are the
// manifest's (fatbin checksum, ActionID, source closure), that nvcc's
// version is the manifest's, and that each binary CONTAINS the kernels
// exactly when it embeds the manifest.
func checkSBOMKernels(x sbomIndex, v Verified) error {
	nvcc := x.pkgs[sbomNvcc]
	if nvcc == nil {
		return fmt.Errorf("no package SPDXRef-%s", sbomNvcc)
	}
	if nvcc.PackageVersion != v.Manifest.NvccBuild {
		return fmt.Errorf("%s %q, the bundle's manifest has nvcc_build %q", pkgField(nvcc, "versionInfo"), nvcc.PackageVersion, v.Manifest.NvccBuild)
	}
	var ids []common.ElementID
	for _, k := range v.Manifest.Kernels {
		id := spdxID("Kernel", k.Name)
		p := x.pkgs[id]
		if p == nil {
			return fmt.Errorf("no package SPDXRef-%s for kernel %s of the bundle's manifest", id, k.Name)
		}
		switch {
		case p.PackageComment != "ActionID "+k.ActionID:
			return fmt.Errorf("%s %q, the bundle's manifest has ActionID %s", pkgField(p, "comment"), p.PackageComment, k.ActionID)
		case p.PackageSourceInfo != kernelSourceInfo(k):
			return fmt.Errorf("%s %q, the bundle's manifest says %q", pkgField(p, "sourceInfo"), p.PackageSourceInfo, kernelSourceInfo(k))
		case !slices.Contains(x.out[sbomNvcc]["BUILD_TOOL_OF"], id):
			return fmt.Errorf("%s: nvcc is not BUILD_TOOL_OF it", pkgField(p, "relationships"))
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	man := v.Files[KernelManifest]
	for _, rel := range sortedBinaries(v.Files) {
		bin := x.pkgs[spdxID("Binary", strings.TrimPrefix(rel, "bin/"))]
		var got []common.ElementID
		for _, id := range x.out[bin.PackageSPDXIdentifier]["CONTAINS"] {
			if p := x.pkgs[id]; p != nil && strings.HasPrefix(p.PackageName, "kernel ") {
				got = append(got, id)
			}
		}
		slices.Sort(got)
		var want []common.ElementID
		if bytes.Contains(v.Files[rel], man) {
			want = ids
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("%s: CONTAINS kernels %v, %s embeds %v", pkgField(bin, "relationships"), got, rel, want)
		}
	}
	return nil
}

// kernelSourceInfo is a kernel package's sourceInfo.
func kernelSourceInfo(k manifest.Kernel) string {
	return "built from " + k.Source + " (source closure " + k.ClosureHash + ")"
}

// checkSBOMSource checks the archive package against the provenance:
// version, download location (the source commit) and licence.
func checkSBOMSource(x sbomIndex, v Verified) error {
	p := x.pkgs[sbomArchive]
	switch {
	case p.PackageVersion != v.Version:
		return fmt.Errorf("%s %q, the provenance's externalParameters.version is %q", pkgField(p, "versionInfo"), p.PackageVersion, v.Version)
	case p.PackageDownloadLocation != v.Source:
		return fmt.Errorf("%s %q, the provenance's externalParameters.source is %q", pkgField(p, "downloadLocation"), p.PackageDownloadLocation, v.Source)
	case p.PackageLicenseDeclared != License:
		return fmt.Errorf("%s %q, want %q (LICENSE)", pkgField(p, "licenseDeclared"), p.PackageLicenseDeclared, License)
	}
	return nil
}

// checkImageLabels checks the image config's OCI labels against the
// provenance: version, revision (absent when the commit is unknown) and
// source (the repository of externalParameters.source). Verify calls it
// once the provenance is read. Errors name the label and the field.
func checkImageLabels(labels map[string]string, v Verified) error {
	if got := labels[oci.AnnotationVersion]; got != v.Version {
		return fmt.Errorf("image label %s %q, externalParameters.version %q", oci.AnnotationVersion, got, v.Version)
	}
	if got, ok := labels[oci.AnnotationRevision]; got != v.Commit || (v.Commit == "" && ok) {
		return fmt.Errorf("image label %s %q, externalParameters.commit %q", oci.AnnotationRevision, got, v.Commit)
	}
	if v.Commit != "" {
		repo := strings.TrimSuffix(strings.TrimPrefix(v.Source, "git+"), "@"+v.Commit)
		if got := labels[labelSource]; got != repo {
			return fmt.Errorf("image label %s %q, externalParameters.source names %q", labelSource, got, repo)
		}
	}
	return nil
}
