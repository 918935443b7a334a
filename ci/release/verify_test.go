package release

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/ci/oci"
)

var (
	goodOnce sync.Once
	goodRoot string // holds the shared good release; removed by TestMain
	goodDir  string
	goodErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if goodRoot != "" {
		_ = os.RemoveAll(goodRoot) // scratch of this test binary only
	}
	os.Exit(code)
}

// goodRelease builds the hello release once per test binary and returns a
// fresh copy of its directory.
func goodRelease(t *testing.T) string {
	t.Helper()
	goodOnce.Do(func() {
		var err error
		if goodRoot, err = os.MkdirTemp("", "cuzk-release-good-"); err != nil {
			goodErr = err
			return
		}
		root := filepath.Join(goodRoot, "src")
		copyTree(t, filepath.Join("testdata", "hello"), root)
		var d Dist
		d, goodErr = Make(context.Background(), helloOptions(t, root), testBase(), testSource)
		goodDir = d.Dir
	})
	require.NoError(t, goodErr)
	dst := filepath.Join(t.TempDir(), "dist")
	copyTree(t, goodDir, dst)
	return dst
}

func rewrite(t *testing.T, path string, edit func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	out := edit(b)
	require.NotEqual(t, b, out, "the damage changes %s", path)
	require.NoError(t, os.WriteFile(path, out, 0o644))
}

// resum rewrites dist/SHA256SUMS for the current files, so that a damage
// must be caught by a later check than the checksums.
func resum(t *testing.T, dir string) {
	t.Helper()
	listed, err := parseSums(mustRead(t, filepath.Join(dir, SumsFile)))
	require.NoError(t, err)
	var files []oci.File
	for name := range listed {
		files = append(files, oci.File{Path: name, Data: mustRead(t, filepath.Join(dir, name))})
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, SumsFile), sums(files), 0o644))
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}

func only(t *testing.T, dir, pattern string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	require.NoError(t, err)
	require.Len(t, m, 1, pattern)
	return m[0]
}

func flipMiddle(b []byte) []byte {
	out := bytes.Clone(b)
	out[len(out)/2] ^= 0x01
	return out
}

func TestVerifyGoodRelease(t *testing.T) {
	dir := goodRelease(t)
	v, err := Verify(dir)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(v.Name, "cuzk-v0.0.1-test-"), v.Name)
	assert.Contains(t, v.Files, "bin/cuzk-daemon")
	assert.Len(t, v.Manifest.Kernels, 1)
	assert.True(t, strings.HasPrefix(v.ImageDigest, "sha256:"))
	sbom := string(mustRead(t, only(t, dir, "*"+SBOMSuffix)))
	for _, want := range []string{`"spdxVersion": "SPDX-2.3"`, "SPDXRef-Kernel-fr-add", "ActionID 1111", "SPDXRef-Deb-libc6",
		"pkg:deb/debian/libc6@2.36-9+deb12u14?arch=amd64", "SPDXRef-Binary-hello", "pkg:golang/stdlib@go"} {
		assert.Contains(t, sbom, want)
	}
	prov := string(mustRead(t, only(t, dir, "*"+ProvenanceSuffix)))
	for _, want := range []string{`"_type": "https://in-toto.io/Statement/v1"`, `"predicateType": "https://slsa.dev/provenance/v1"`,
		`"gitCommit": "` + testSource.Commit, `"action_id": "1111`, `"name": "image"`, `"name": "bin/cuzk-daemon"`} {
		assert.Contains(t, prov, want)
	}
}

func TestVerifyFindsDamage(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string // the error names this
	}{
		{"archive bytes", func(t *testing.T, dir string) {
			rewrite(t, only(t, dir, "*.tar.gz"), flipMiddle)
		}, ".tar.gz: sha256"},
		{"sums line", func(t *testing.T, dir string) {
			rewrite(t, filepath.Join(dir, SumsFile), func(b []byte) []byte { return bytes.Replace(b, []byte("a"), []byte("b"), 1) })
		}, "lists"},
		{"missing sbom", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(only(t, dir, "*"+SBOMSuffix)))
		}, SBOMSuffix},
		{"sbom binary checksum", func(t *testing.T, dir string) {
			v, err := Verify(dir)
			require.NoError(t, err)
			rewrite(t, only(t, dir, "*"+SBOMSuffix), func(b []byte) []byte {
				return bytes.Replace(b, []byte(sha256Hex(v.Files["bin/hello"])), []byte(strings.Repeat("0", 64)), 1)
			})
			resum(t, dir)
		}, SBOMSuffix + ": package hello"},
		{"sbom kernel checksum", func(t *testing.T, dir string) {
			rewrite(t, only(t, dir, "*"+SBOMSuffix), func(b []byte) []byte {
				return bytes.Replace(b, []byte(strings.Repeat("3", 64)), []byte(strings.Repeat("4", 64)), 1)
			})
			resum(t, dir)
		}, SBOMSuffix + ": package \"kernel fr_add\" checksums SHA256"},
		{"sbom dangling relationship", func(t *testing.T, dir string) {
			rewrite(t, only(t, dir, "*"+SBOMSuffix), func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"relatedSpdxElement": "SPDXRef-Image"`), []byte(`"relatedSpdxElement": "SPDXRef-Nothing"`), 1)
			})
			resum(t, dir)
		}, SBOMSuffix},
		{"provenance subject", func(t *testing.T, dir string) {
			v, err := Verify(dir)
			require.NoError(t, err)
			rewrite(t, only(t, dir, "*"+ProvenanceSuffix), func(b []byte) []byte {
				return bytes.Replace(b, []byte(strings.TrimPrefix(v.ImageDigest, "sha256:")), []byte(strings.Repeat("0", 64)), 1)
			})
			resum(t, dir)
		}, ProvenanceSuffix + ": subject image"},
		{"provenance kernel", func(t *testing.T, dir string) {
			rewrite(t, only(t, dir, "*"+ProvenanceSuffix), func(b []byte) []byte {
				return bytes.Replace(b, []byte(strings.Repeat("3", 64)), []byte(strings.Repeat("5", 64)), 1)
			})
			resum(t, dir)
		}, ProvenanceSuffix + ": resolvedDependencies[1] (kernel fr_add).digest.sha256"},
		{"image layer", func(t *testing.T, dir string) {
			c, err := oci.Verify(filepath.Join(dir, ImageDir))
			require.NoError(t, err)
			l := c.Manifest.Layers[1].Digest
			rewrite(t, filepath.Join(dir, ImageDir, "blobs", l.Algorithm, l.Hex), flipMiddle)
		}, "verify image/blobs/sha256/"},
		{"image index", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, ImageDir, "index.json")))
		}, "index.json"},
		{"stale kernels in the daemon", func(t *testing.T, dir string) {
			// A bundle whose manifest is not the one its daemon embeds,
			// with every checksum made consistent again.
			root := filepath.Join(t.TempDir(), "src")
			copyTree(t, filepath.Join("testdata", "hello"), root)
			o := helloOptions(t, root)
			o.OutDir = dir
			other := filepath.Join(t.TempDir(), "manifest.json")
			m := mustRead(t, filepath.Join(root, "cmd", "cuzk-daemon", "manifest.json"))
			require.NoError(t, os.WriteFile(other, bytes.Replace(m, []byte(`"toolchain":"test"`), []byte(`"toolchain":"new"`), 1), 0o644))
			o.Extra = append([]Extra{{Src: other, Dst: KernelManifest}}, LicenseExtras(root)...)
			_, err := Make(context.Background(), o, testBase(), testSource)
			require.NoError(t, err)
		}, "does not embed the bundle's"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := goodRelease(t)
			tt.damage(t, dir)
			_, err := Verify(dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestAssets(t *testing.T) {
	dir := goodRelease(t)
	got, err := Assets(dir)
	require.NoError(t, err)
	var names []string
	for _, p := range got {
		names = append(names, filepath.Base(p))
	}
	name := strings.TrimSuffix(filepath.Base(only(t, dir, "*.tar.gz")), ".tar.gz")
	assert.Equal(t, []string{SumsFile, name + ProvenanceSuffix, name + SBOMSuffix, name + ".tar.gz"}, names)
	require.NoError(t, os.Remove(only(t, dir, "*"+ProvenanceSuffix)))
	_, err = Assets(dir)
	assert.Error(t, err, "nothing is attached from a damaged release")
}

func TestCheckEmbedded(t *testing.T) {
	man := []byte("{\n  \"fatbin_sha256\": \"aa\"\n}\n")
	other := []byte("{\n  \"fatbin_sha256\": \"bb\"\n}\n")
	daemon := append([]byte("ELF"), man...)
	tests := map[string]struct {
		files   map[string][]byte
		wantErr string
	}{
		"all embed":                           {files: map[string][]byte{KernelManifest: man, "bin/cuzk-daemon": daemon, "bin/cuzk-bench": daemon, "bin/cuzk": []byte("ELF")}},
		"a binary without kernels needs none": {files: map[string][]byte{KernelManifest: man, "bin/cuzk-daemon": daemon, "bin/tool": []byte("ELF")}},
		"stale bench":                         {map[string][]byte{KernelManifest: man, "bin/cuzk-daemon": daemon, "bin/cuzk-bench": other}, "bin/cuzk-bench does not embed"},
		"bench embeds nothing":                {map[string][]byte{KernelManifest: man, "bin/cuzk-daemon": daemon, "bin/cuzk-bench": []byte("ELF")}, "bin/cuzk-bench does not embed"},
		"stale client":                        {map[string][]byte{KernelManifest: man, "bin/cuzk-daemon": daemon, "bin/cuzk": other}, "bin/cuzk does not embed"},
		"daemon embeds nothing":               {map[string][]byte{KernelManifest: man, "bin/cuzk-daemon": []byte("ELF")}, "bin/cuzk-daemon does not embed"},
		"no daemon":                           {map[string][]byte{KernelManifest: man}, "no bin/cuzk-daemon"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			err := checkEmbedded(tt.files)
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}

// TestKernelBinariesImportCuda keeps KernelBinaries equal to the default
// packages whose dependencies include the cuda package.
func TestKernelBinariesImportCuda(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	var want []string
	for _, pkg := range DefaultPackages {
		cmd := exec.Command("go", "list", "-deps", pkg)
		cmd.Dir = repo
		out, err := cmd.Output()
		require.NoError(t, err, "go list -deps %s", pkg)
		if slices.Contains(strings.Fields(string(out)), "github.com/cuzk-dev/cuzk/cuda") {
			want = append(want, path.Base(pkg))
		}
	}
	assert.ElementsMatch(t, want, KernelBinaries)
}

func TestCompareDirsNamesTheFile(t *testing.T) {
	a, b := goodRelease(t), goodRelease(t)
	require.NoError(t, CompareDirs(a, b))
	c, err := oci.Verify(filepath.Join(b, ImageDir))
	require.NoError(t, err)
	cfg := c.Manifest.Config.Digest
	rewrite(t, filepath.Join(b, ImageDir, "blobs", cfg.Algorithm, cfg.Hex), flipMiddle)
	err = CompareDirs(a, b)
	require.Error(t, err)
	assert.Contains(t, err.Error(), cfg.Hex)
}
