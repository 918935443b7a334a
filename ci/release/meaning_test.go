package release

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/ci/oci"
)

// editJSON rewrites a JSON file through edit, keeping the two-space indent.
func editJSON(t *testing.T, path string, edit func(m map[string]any)) {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(mustRead(t, path), &m))
	edit(m)
	out, err := json.MarshalIndent(m, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append(out, '\n'), 0o644))
}

// sbomLists returns the SBOM's packages and relationships for editing.
func sbomLists(m map[string]any) (pkgs, rels []any) {
	pkgs, _ = m["packages"].([]any)
	rels, _ = m["relationships"].([]any)
	return pkgs, rels
}

// deletePackage removes the packages named name and, when rels is true,
// every relationship that mentions them: a consistent deletion.
func deletePackage(name string, rels bool) func(m map[string]any) {
	return func(m map[string]any) {
		pkgs, rs := sbomLists(m)
		gone := map[string]bool{}
		var keep []any
		for _, p := range pkgs {
			if p.(map[string]any)["name"] == name {
				gone[p.(map[string]any)["SPDXID"].(string)] = true
				continue
			}
			keep = append(keep, p)
		}
		m["packages"] = keep
		if !rels {
			return
		}
		var keepRels []any
		for _, r := range rs {
			r := r.(map[string]any)
			if !gone[r["spdxElementId"].(string)] && !gone[r["relatedSpdxElement"].(string)] {
				keepRels = append(keepRels, r)
			}
		}
		m["relationships"] = keepRels
	}
}

// setPackageField sets field of the package named name.
func setPackageField(name, field string, value any) func(m map[string]any) {
	return func(m map[string]any) {
		pkgs, _ := sbomLists(m)
		for _, p := range pkgs {
			if p := p.(map[string]any); p["name"] == name {
				p[field] = value
			}
		}
	}
}

// provenanceEdit edits the provenance's predicate.
func provenanceEdit(edit func(def map[string]any)) func(m map[string]any) {
	return func(m map[string]any) {
		edit(m["predicate"].(map[string]any)["buildDefinition"].(map[string]any))
	}
}

func gitDep(def map[string]any) map[string]any {
	for _, d := range def["resolvedDependencies"].([]any) {
		d := d.(map[string]any)
		if _, ok := d["digest"].(map[string]any)["gitCommit"]; ok {
			return d
		}
	}
	panic("no gitCommit dependency")
}

// TestVerifyCatchesForgeries edits the SBOM or the provenance consistently
// (SHA256SUMS regenerated) and expects Verify to name the file and field.
// The first cases are the forgeries of issue 29, with x/sync standing in
// for grpc (the test daemon's one module).
func TestVerifyCatchesForgeries(t *testing.T) {
	sbom := func(edit func(m map[string]any)) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) { editJSON(t, only(t, dir, "*"+SBOMSuffix), edit) }
	}
	prov := func(edit func(def map[string]any)) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			editJSON(t, only(t, dir, "*"+ProvenanceSuffix), provenanceEdit(edit))
		}
	}
	const xsync = "golang.org/x/sync"
	tests := []struct {
		name  string
		forge func(t *testing.T, dir string)
		want  []string // the error names these
	}{
		{"sbom module version changed everywhere", func(t *testing.T, dir string) {
			rewrite(t, only(t, dir, "*"+SBOMSuffix), func(b []byte) []byte {
				return bytes.ReplaceAll(b, []byte("v0.23.0"), []byte("v0.23.1"))
			})
		}, []string{SBOMSuffix, "package SPDXRef-Go-golang.org-x-sync-v0.23.1 versionInfo \"v0.23.1\"", "golang.org/x/sync v0.23.0"}},
		{"sbom module deleted with its relationships", sbom(deletePackage(xsync, true)),
			[]string{SBOMSuffix, "bin/cuzk-daemon's build info has Go module golang.org/x/sync v0.23.0"}},
		{"sbom module deleted, relationships left", sbom(deletePackage(xsync, false)), []string{SBOMSuffix, "Go-golang.org-x-sync-v0.23.0 used in relationship"}},
		{"sbom module added", sbom(func(m map[string]any) {
			pkgs, rels := sbomLists(m)
			m["packages"] = append(pkgs, map[string]any{"SPDXID": "SPDXRef-Go-example.com-evil-v1.0.0", "name": "example.com/evil",
				"versionInfo": "v1.0.0", "downloadLocation": "NOASSERTION", "filesAnalyzed": false,
				"externalRefs": []any{map[string]any{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl", "referenceLocator": "pkg:golang/example.com/evil@v1.0.0"}}})
			m["relationships"] = append(rels, map[string]any{"spdxElementId": "SPDXRef-Binary-cuzk-daemon",
				"relatedSpdxElement": "SPDXRef-Go-example.com-evil-v1.0.0", "relationshipType": "CONTAINS"})
		}), []string{SBOMSuffix, "package SPDXRef-Go-example.com-evil-v1.0.0 name example.com/evil: bin/cuzk-daemon CONTAINS it, its build info has no module"}},
		{"sbom module version only", sbom(setPackageField(xsync, "versionInfo", "v0.24.0")),
			[]string{SBOMSuffix, "versionInfo \"v0.24.0\""}},
		{"sbom module sum", sbom(setPackageField(xsync, "comment", "go.sum h1:AAAA=")), []string{SBOMSuffix, "comment \"go.sum h1:AAAA=\""}},
		{"sbom module purl", sbom(setPackageField(xsync, "externalRefs", []any{map[string]any{
			"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl", "referenceLocator": "pkg:golang/golang.org/x/sync@v0.1.0"}})),
			[]string{SBOMSuffix, "externalRefs purl"}},
		{"sbom go release", sbom(setPackageField("go", "versionInfo", "go1.0")), []string{SBOMSuffix, "versionInfo \"go1.0\""}},
		{"sbom binary source", sbom(setPackageField("hello", "sourceInfo", "built elsewhere")), []string{SBOMSuffix, "SPDXRef-Binary-hello sourceInfo"}},
		{"sbom kernel action id", sbom(setPackageField("kernel fr_add", "comment", "ActionID "+strings.Repeat("9", 64))),
			[]string{SBOMSuffix, "SPDXRef-Kernel-fr-add comment"}},
		{"sbom kernel deleted", sbom(deletePackage("kernel fr_add", true)), []string{SBOMSuffix, "kernel"}},
		{"sbom nvcc", sbom(setPackageField("nvcc", "versionInfo", "other")), []string{SBOMSuffix, "SPDXRef-CUDA-nvcc versionInfo"}},
		{"sbom archive location", sbom(setPackageField(filepathBaseArchive, "downloadLocation", "git+https://example.com/x@"+strings.Repeat("d", 40))),
			[]string{SBOMSuffix, "SPDXRef-Archive downloadLocation"}},
		{"sbom licence", sbom(setPackageField(filepathBaseArchive, "licenseDeclared", "MIT")), []string{SBOMSuffix, "licenseDeclared \"MIT\""}},
		{"sbom tag-value purpose (schema)", sbom(setPackageField("libc6", "primaryPackagePurpose", "OPERATING-SYSTEM")),
			[]string{SBOMSuffix, "spdx 2.3 schema", "(SPDXRef-Deb-libc6)/primaryPackagePurpose"}},
		{"provenance commit disagrees with gitCommit and uri", prov(func(def map[string]any) {
			def["externalParameters"].(map[string]any)["commit"] = strings.Repeat("d", 40)
		}), []string{ProvenanceSuffix, "externalParameters.commit"}},
		{"provenance gitCommit", prov(func(def map[string]any) {
			gitDep(def)["digest"].(map[string]any)["gitCommit"] = strings.Repeat("d", 40)
		}), []string{ProvenanceSuffix, "resolvedDependencies[0].digest.gitCommit"}},
		{"provenance uri", prov(func(def map[string]any) {
			gitDep(def)["uri"] = "git+https://example.com/fork@" + strings.Repeat("c", 40)
		}), []string{ProvenanceSuffix, "resolvedDependencies[0].uri"}},
		{"provenance source", prov(func(def map[string]any) {
			def["externalParameters"].(map[string]any)["source"] = "git+https://example.com/fork@" + strings.Repeat("c", 40)
		}), []string{ProvenanceSuffix, "externalParameters.source"}},
		{"provenance commit and dependency agree, source does not", prov(func(def map[string]any) {
			c := strings.Repeat("d", 40)
			def["externalParameters"].(map[string]any)["commit"] = c
			gitDep(def)["digest"].(map[string]any)["gitCommit"] = c
		}), []string{ProvenanceSuffix, "externalParameters.source", "want git+<repository>@" + strings.Repeat("d", 40)}},
		{"provenance version", prov(func(def map[string]any) {
			def["externalParameters"].(map[string]any)["version"] = "v9.9.9"
		}), []string{ProvenanceSuffix, "externalParameters.version \"v9.9.9\""}},
		{"provenance kernel action id", prov(func(def map[string]any) {
			for _, d := range def["resolvedDependencies"].([]any) {
				if d := d.(map[string]any); d["name"] == "kernel fr_add" {
					d["annotations"].(map[string]any)["action_id"] = strings.Repeat("9", 64)
				}
			}
		}), []string{ProvenanceSuffix, "(kernel fr_add).annotations.action_id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := goodRelease(t)
			tt.forge(t, dir)
			resum(t, dir)
			_, err := Verify(dir)
			require.Error(t, err)
			t.Log(err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// filepathBaseArchive is the test release's archive package name.
var filepathBaseArchive = "cuzk-v0.0.1-test-" + testGOOSARCH() + ".tar.gz"

func testGOOSARCH() string {
	o, _ := Options{Root: ".", OutDir: ".", Epoch: epoch, Packages: []string{"./x"}}.withDefaults()
	return o.GOOS + "-" + o.GOARCH
}

// TestVerifyNamesDamagedBlob damages each blob of the image and expects
// the error to name it and its role.
func TestVerifyNamesDamagedBlob(t *testing.T) {
	tests := []struct {
		name   string
		pick   func(c oci.Checked) (hex, role string)
		damage func(t *testing.T, p string)
	}{
		{"base layer", func(c oci.Checked) (string, string) { return c.Manifest.Layers[0].Digest.Hex, "layer 1 of 2" }, flip},
		{"payload layer", func(c oci.Checked) (string, string) { return c.Manifest.Layers[1].Digest.Hex, "layer 2 of 2" }, flip},
		{"missing payload layer", func(c oci.Checked) (string, string) { return c.Manifest.Layers[1].Digest.Hex, "layer 2 of 2" }, remove},
		{"config", func(c oci.Checked) (string, string) { return c.Manifest.Config.Digest.Hex, "config of" }, flip},
		{"manifest", func(c oci.Checked) (string, string) { return c.Descriptor.Digest.Hex, "manifest 1 of index.json" }, flip},
		{"truncated layer", func(c oci.Checked) (string, string) { return c.Manifest.Layers[1].Digest.Hex, "layer 2 of 2" }, truncate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := goodRelease(t)
			c, err := oci.Verify(filepath.Join(dir, ImageDir))
			require.NoError(t, err)
			hex, role := tt.pick(c)
			tt.damage(t, filepath.Join(dir, ImageDir, "blobs", "sha256", hex))
			_, err = Verify(dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "verify image/blobs/sha256/"+hex+" ("+role)
		})
	}
}

func flip(t *testing.T, p string)   { rewrite(t, p, flipMiddle) }
func remove(t *testing.T, p string) { require.NoError(t, os.Remove(p)) }
func truncate(t *testing.T, p string) {
	rewrite(t, p, func(b []byte) []byte { return b[:len(b)-1] })
}

// TestVerifyRefusesLeftovers: a file of another release in the directory
// (the old `dev` archive after a v0.1.0 release) fails verification.
func TestVerifyRefusesLeftovers(t *testing.T) {
	dir := goodRelease(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cuzk-dev-linux-amd64.tar.gz"), []byte("old"), 0o644))
	_, err := Verify(dir)
	assert.ErrorContains(t, err, "cuzk-dev-linux-amd64.tar.gz is not listed in SHA256SUMS")
}

// TestVerifyWantsLicence: a bundle without the licence files fails.
func TestVerifyWantsLicence(t *testing.T) {
	root := filepath.Join(t.TempDir(), "src")
	copyTree(t, filepath.Join("testdata", "hello"), root)
	o := helloOptions(t, root)
	o.Extra = o.Extra[:1] // the kernel manifest only
	d, err := Make(context.Background(), o, testBase(), testSource)
	require.NoError(t, err)
	_, err = Verify(d.Dir)
	assert.ErrorContains(t, err, "no LICENSE in the bundle")
}

// TestSBOMSuppliersAndLicences checks the fields the schema leaves
// optional and users look for.
func TestSBOMSuppliersAndLicences(t *testing.T) {
	dir := goodRelease(t)
	var doc struct {
		Packages []struct {
			ID       string `json:"SPDXID"`
			Supplier string `json:"supplier"`
			Declared string `json:"licenseDeclared"`
			Purpose  string `json:"primaryPackagePurpose"`
		} `json:"packages"`
	}
	require.NoError(t, json.Unmarshal(mustRead(t, only(t, dir, "*"+SBOMSuffix)), &doc))
	byID := map[string]int{}
	for i, p := range doc.Packages {
		byID[p.ID] = i
		assert.NotEmpty(t, p.Supplier, p.ID)
		assert.NotEmpty(t, p.Declared, p.ID)
	}
	for _, id := range []string{"SPDXRef-Archive", "SPDXRef-Image", "SPDXRef-Binary-cuzk-daemon", "SPDXRef-Kernel-fr-add"} {
		require.Contains(t, byID, id)
		p := doc.Packages[byID[id]]
		assert.Equal(t, "Organization: cuzk-dev", p.Supplier, id)
		assert.Equal(t, License, p.Declared, id)
	}
	assert.Equal(t, "Organization: Debian", doc.Packages[byID["SPDXRef-Deb-libc6"]].Supplier)
	assert.Equal(t, "OPERATING_SYSTEM", doc.Packages[byID["SPDXRef-Deb-libc6"]].Purpose)
}

// TestProvenanceCommitAgainstVCSRevision: a binary that carries
// vcs.revision (a build without -buildvcs=false) must name the
// provenance's commit.
func TestProvenanceCommitAgainstVCSRevision(t *testing.T) {
	dir := goodRelease(t)
	v, err := Verify(dir)
	require.NoError(t, err)
	_, pred, err := ReadStatement(mustRead(t, only(t, dir, "*"+ProvenanceSuffix)))
	require.NoError(t, err)
	bis, err := readBuildInfo(v.Files)
	require.NoError(t, err)
	require.NoError(t, checkProvenanceMeaning(pred, &v, bis), "release builds carry no vcs.* settings")

	withRev := func(rev string) map[string]*debug.BuildInfo {
		out := map[string]*debug.BuildInfo{}
		for rel, bi := range bis {
			c := *bi
			c.Settings = append(slices.Clone(bi.Settings), debug.BuildSetting{Key: "vcs.revision", Value: rev})
			out[rel] = &c
		}
		return out
	}
	require.NoError(t, checkProvenanceMeaning(pred, &v, withRev(testSource.Commit)))
	err = checkProvenanceMeaning(pred, &v, withRev(strings.Repeat("f", 40)))
	assert.ErrorContains(t, err, "externalParameters.commit \""+testSource.Commit+"\", bin/cuzk-daemon was built from vcs.revision "+strings.Repeat("f", 40))
}
