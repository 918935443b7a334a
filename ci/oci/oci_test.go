package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testBase = "nvidia/cuda:11.8.0-base-ubuntu22.04@sha256:79e5b2cf878ee9006f5b3738caeea34fdc7708a32db53fe3e80db0b48bd286a0"

var epoch = time.Unix(1_700_000_000, 0)

func testImage() Image {
	return Image{
		Base: testBase,
		Files: []File{
			{Path: "/usr/local/bin/cuzk-daemon", Mode: 0o755, Data: []byte("\x7fELF fake daemon")},
			{Path: "/usr/share/cuzk/manifest.json", Mode: 0o644, Data: []byte(`{"version":1}`)},
		},
		Entrypoint:   []string{"/usr/local/bin/cuzk-daemon"},
		Env:          []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		Labels:       map[string]string{AnnotationTitle: "cuzk-daemon"},
		Created:      epoch,
		OS:           "linux",
		Architecture: "amd64",
		RefName:      "v0.1.0",
		CreatedBy:    "cuzk release",
	}
}

func TestParseReference(t *testing.T) {
	tests := []struct {
		ref, name, digest string
		ok                bool
	}{
		{testBase, "nvidia/cuda:11.8.0-base-ubuntu22.04", "sha256:79e5b2cf878ee9006f5b3738caeea34fdc7708a32db53fe3e80db0b48bd286a0", true},
		{"nvidia/cuda:11.8.0-base-ubuntu22.04", "", "", false},
		{"nvidia/cuda@sha256:abc", "", "", false},
		{"@sha256:" + strings.Repeat("a", 64), "", "", false},
		{"x@sha256:" + strings.Repeat("A", 64), "", "", false},
		{"x@sha512:" + strings.Repeat("a", 64), "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			r, err := ParseReference(tt.ref)
			if !tt.ok {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.name, r.Name)
			assert.Equal(t, tt.digest, r.Digest)
			assert.Equal(t, tt.ref, r.String())
		})
	}
}

type tarEntry struct {
	name     string
	typ      byte
	mode     int64
	uid, gid int
	mtime    time.Time
	data     string
}

func readTarGz(t *testing.T, blob []byte) []tarEntry {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(blob))
	require.NoError(t, err)
	assert.True(t, zr.ModTime.IsZero(), "gzip header carries no time")
	assert.Empty(t, zr.Name, "gzip header carries no name")
	tr := tar.NewReader(zr)
	var out []tarEntry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		out = append(out, tarEntry{h.Name, h.Typeflag, h.Mode, h.Uid, h.Gid, h.ModTime, string(data)})
	}
}

func TestTarGzNormalizes(t *testing.T) {
	img := testImage()
	l, err := TarGz(img.Files, epoch.Add(999*time.Millisecond))
	require.NoError(t, err)
	got := readTarGz(t, l.Blob)
	names := []string{}
	for _, e := range got {
		names = append(names, e.name)
		assert.Zero(t, e.uid, e.name)
		assert.Zero(t, e.gid, e.name)
		assert.True(t, e.mtime.Equal(epoch), "%s mtime %v", e.name, e.mtime)
	}
	assert.Equal(t, []string{"usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/cuzk-daemon",
		"usr/share/", "usr/share/cuzk/", "usr/share/cuzk/manifest.json"}, names)
	assert.Equal(t, byte(tar.TypeDir), got[0].typ)
	assert.Equal(t, int64(0o755), got[0].mode)
	assert.Equal(t, int64(0o755), got[3].mode)
	assert.Equal(t, "\x7fELF fake daemon", got[3].data)
	assert.Equal(t, int64(0o644), got[6].mode)

	// Input order and a leading "/" do not change the bytes.
	swapped := []File{img.Files[1], img.Files[0]}
	swapped[0].Path = strings.TrimPrefix(swapped[0].Path, "/")
	l2, err := TarGz(swapped, epoch)
	require.NoError(t, err)
	assert.Equal(t, l.Blob, l2.Blob)
	assert.Equal(t, Digest(l.Blob), l.Digest)
}

func TestTarGzRejects(t *testing.T) {
	tests := map[string][]File{
		"dotdot":       {{Path: "../etc/passwd", Mode: 0o644}},
		"unclean":      {{Path: "a//b", Mode: 0o644}},
		"dir path":     {{Path: "a/", Mode: 0o644}},
		"empty":        {{Path: "", Mode: 0o644}},
		"duplicate":    {{Path: "a", Mode: 0o644}, {Path: "/a", Mode: 0o644}},
		"file and dir": {{Path: "a", Mode: 0o644}, {Path: "a/b", Mode: 0o644}},
		"setuid":       {{Path: "a", Mode: 0o4755 | fs.ModeSetuid}},
	}
	for name, files := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := TarGz(files, epoch)
			assert.Error(t, err)
		})
	}
}

// treeBytes maps every file under dir (relative path) to its content.
func treeBytes(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p) // p is under dir by construction
		out[rel] = b
		return err
	}))
	return out
}

func TestWriteReproducible(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "one"), filepath.Join(t.TempDir(), "two", "layout")
	da, err := Write(a, testImage())
	require.NoError(t, err)
	db, err := Write(b, testImage())
	require.NoError(t, err)
	assert.Equal(t, da, db)
	ta, tb := treeBytes(t, a), treeBytes(t, b)
	assert.Equal(t, ta, tb, "layouts differ")
	assert.Len(t, ta, 5, "oci-layout, index.json and three blobs")
	for rel, data := range ta {
		if hexName, ok := strings.CutPrefix(rel, filepath.Join("blobs", "sha256")+string(filepath.Separator)); ok {
			sum := sha256.Sum256(data)
			assert.Equal(t, hexName, hex.EncodeToString(sum[:]), "blob %s named by its content", rel)
		}
	}
	c, err := Verify(a)
	require.NoError(t, err)
	assert.Equal(t, da.Digest, c.Index.Manifests[0].Digest)
}

func TestWriteConfigAndAnnotations(t *testing.T) {
	dir := t.TempDir()
	_, err := Write(dir, testImage())
	require.NoError(t, err)
	c, err := Verify(dir)
	require.NoError(t, err)
	base := "nvidia/cuda:11.8.0-base-ubuntu22.04"
	digest := "sha256:79e5b2cf878ee9006f5b3738caeea34fdc7708a32db53fe3e80db0b48bd286a0"
	assert.Equal(t, map[string]string{AnnotationBaseName: base, AnnotationBaseDigest: digest,
		AnnotationTitle: "cuzk-daemon"}, c.Config.Config.Labels)
	assert.Equal(t, base, c.Manifest.Annotations[AnnotationBaseName])
	assert.Equal(t, digest, c.Manifest.Annotations[AnnotationBaseDigest])
	assert.Equal(t, "2023-11-14T22:13:20Z", c.Config.Created)
	assert.Equal(t, "2023-11-14T22:13:20Z", c.Manifest.Annotations[AnnotationCreated])
	assert.Equal(t, "v0.1.0", c.Index.Manifests[0].Annotations[AnnotationRefName])
	assert.Equal(t, &Platform{Architecture: "amd64", OS: "linux"}, c.Index.Manifests[0].Platform)
	assert.Equal(t, []string{"/usr/local/bin/cuzk-daemon"}, c.Config.Config.Entrypoint)
	assert.Equal(t, "layers", c.Config.RootFS.Type)
	require.Len(t, c.Manifest.Layers, 1)
	layer, err := ReadBlob(dir, c.Manifest.Layers[0])
	require.NoError(t, err)
	entries := readTarGz(t, layer)
	assert.Equal(t, "usr/local/bin/cuzk-daemon", entries[3].name)
}

func TestVerifyDetectsDamage(t *testing.T) {
	tests := map[string]func(t *testing.T, dir string, c Checked){
		"layer bytes": func(t *testing.T, dir string, c Checked) {
			p := blobPath(dir, c.Manifest.Layers[0].Digest)
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			b[len(b)/2] ^= 0xff
			require.NoError(t, os.WriteFile(p, b, 0o644))
		},
		"missing config": func(t *testing.T, dir string, c Checked) {
			require.NoError(t, os.Remove(blobPath(dir, c.Manifest.Config.Digest)))
		},
		"index size": func(t *testing.T, dir string, c Checked) {
			b, err := os.ReadFile(filepath.Join(dir, "index.json"))
			require.NoError(t, err)
			b = bytes.Replace(b, []byte(`"size":`), []byte(`"size":1`), 1)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "index.json"), b, 0o644))
		},
		"layout version": func(t *testing.T, dir string, c Checked) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "oci-layout"), []byte(`{"imageLayoutVersion":"9"}`), 0o644))
		},
	}
	for name, damage := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := Write(dir, testImage())
			require.NoError(t, err)
			c, err := Verify(dir)
			require.NoError(t, err)
			damage(t, dir, c)
			_, err = Verify(dir)
			assert.Error(t, err)
		})
	}
}

func blobPath(dir, digest string) string {
	return filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(digest, "sha256:"))
}

func TestWriteRefuses(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stale"), nil, 0o644))
	_, err := Write(dir, testImage())
	assert.ErrorContains(t, err, "not empty")

	bad := map[string]func(*Image){
		"unpinned base": func(i *Image) { i.Base = "nvidia/cuda:11.8.0-base-ubuntu22.04" },
		"no files":      func(i *Image) { i.Files = nil },
		"no created":    func(i *Image) { i.Created = time.Time{} },
		"no platform":   func(i *Image) { i.Architecture = "" },
		"bad ref name":  func(i *Image) { i.RefName = "a/b" },
	}
	for name, mutate := range bad {
		t.Run(name, func(t *testing.T) {
			img := testImage()
			mutate(&img)
			_, err := Write(t.TempDir(), img)
			assert.Error(t, err)
		})
	}
}
