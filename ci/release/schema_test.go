package release

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSPDXSchemaIsTheOfficialCopy pins the embedded schema to the hash its
// source note records, so a local edit cannot weaken the check.
func TestSPDXSchemaIsTheOfficialCopy(t *testing.T) {
	note := string(mustRead(t, filepath.Join("testdata", "spdx-2.3-schema.md")))
	m := regexp.MustCompile("sha256: `([0-9a-f]{64})`").FindStringSubmatch(note)
	require.NotNil(t, m, "the note records the schema's sha256")
	assert.Equal(t, m[1], sha256Hex(spdxSchema))
	assert.Equal(t, mustRead(t, filepath.Join("testdata", "spdx-2.3-schema.json")), spdxSchema)
	assert.Contains(t, note, "spdx/spdx-spec")
	assert.Contains(t, note, "support/2.3")
}

func TestValidateSBOM(t *testing.T) {
	good := mustRead(t, only(t, goodRelease(t), "*"+SBOMSuffix))
	require.NoError(t, ValidateSBOM(good))
	tests := []struct {
		name string
		edit func(m map[string]any)
		want []string
	}{
		{"tag-value purpose", setPackageField("libc6", "primaryPackagePurpose", "OPERATING-SYSTEM"),
			[]string{"1 violation", "/packages/", "(SPDXRef-Deb-libc6)/primaryPackagePurpose"}},
		{"two bad purposes", func(m map[string]any) {
			setPackageField("libc6", "primaryPackagePurpose", "OPERATING-SYSTEM")(m)
			setPackageField("hello", "primaryPackagePurpose", "PROGRAM")(m)
		}, []string{"2 violation", "(SPDXRef-Binary-hello)/primaryPackagePurpose", "(SPDXRef-Deb-libc6)/primaryPackagePurpose"}},
		{"no creators", func(m map[string]any) { delete(m["creationInfo"].(map[string]any), "creators") },
			[]string{"/creationInfo: missing property 'creators'"}},
		{"no name", func(m map[string]any) { delete(m, "name") }, []string{"name"}},
		{"checksum algorithm", setPackageField("hello", "checksums", []any{map[string]any{"algorithm": "CRC32", "checksumValue": "00"}}),
			[]string{"(SPDXRef-Binary-hello)/checksums/0/algorithm"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			require.NoError(t, json.Unmarshal(good, &m))
			tt.edit(m)
			b, err := json.Marshal(m)
			require.NoError(t, err)
			err = ValidateSBOM(b)
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	assert.ErrorContains(t, ValidateSBOM([]byte("{")), "not JSON")
}

func TestEmptyOutDir(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644))
	dist := filepath.Join(root, "dist")
	require.NoError(t, os.MkdirAll(filepath.Join(dist, "image", "blobs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dist, "cuzk-dev-linux-amd64.tar.gz"), []byte("old"), 0o644))
	require.NoError(t, EmptyOutDir(root, dist))
	entries, err := os.ReadDir(dist)
	require.NoError(t, err)
	assert.Empty(t, entries, "no file of the old release survives")

	fresh := filepath.Join(root, "new", "dist")
	require.NoError(t, EmptyOutDir(root, fresh))
	assert.DirExists(t, fresh)

	assert.ErrorContains(t, EmptyOutDir(root, root), "holds the module root")
	assert.ErrorContains(t, EmptyOutDir(filepath.Join(root, "sub"), root), "holds the module root")
	other := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(other, ".git"), 0o755))
	assert.ErrorContains(t, EmptyOutDir(root, other), "holds .git")
	assert.DirExists(t, filepath.Join(other, ".git"))
	assert.FileExists(t, filepath.Join(root, "go.mod"))
}

// TestCompareDirsNamesTheSBOM: a rebuild whose SBOM differs is reported as
// the SBOM (with the differing line), not as SHA256SUMS; an extra file is
// named too.
func TestCompareDirsNamesTheSBOM(t *testing.T) {
	a, b := goodRelease(t), goodRelease(t)
	editJSON(t, only(t, b, "*"+SBOMSuffix), setPackageField("libc6", "versionInfo", "2.36-9+deb12u15"))
	resum(t, b)
	err := CompareDirs(a, b)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "compare: "+filepath.Base(only(t, a, "*"+SBOMSuffix))+" differs")
	assert.Contains(t, err.Error(), "line ")
	assert.NotContains(t, err.Error(), "compare: "+SumsFile)

	c := goodRelease(t)
	require.NoError(t, os.WriteFile(filepath.Join(c, "stray.txt"), nil, 0o644))
	assert.ErrorContains(t, CompareDirs(a, c), "stray.txt is in "+c+" only")
}
