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

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testBase = "nvidia/cuda:11.8.0-base-ubuntu22.04@sha256:79e5b2cf878ee9006f5b3738caeea34fdc7708a32db53fe3e80db0b48bd286a0"

var epoch = time.Unix(1_700_000_000, 0)

func testImage() Image {
	return Image{
		Layers: []LayerSpec{
			{CreatedBy: "base", Entries: []Entry{
				{Path: "/lib64/ld-linux-x86-64.so.2", Kind: KindSymlink, Mode: 0o777, Link: "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"},
				{Path: "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", Kind: KindFile, Mode: 0o755, Data: []byte("\x7fELF loader")},
				{Path: "/tmp", Kind: KindDir, Mode: 0o777 | fs.ModeSticky},
				{Path: "/home/nonroot", Kind: KindDir, Mode: 0o700, UID: 65532, GID: 65532},
			}},
			{CreatedBy: "payload", Entries: Entries([]File{
				{Path: "/usr/local/bin/cuzk-daemon", Mode: 0o755, Data: []byte("\x7fELF fake daemon")},
				{Path: "/usr/share/cuzk/manifest.json", Mode: 0o644, Data: []byte(`{"version":1}`)},
			})},
		},
		Entrypoint:   []string{"/usr/local/bin/cuzk-daemon"},
		Env:          []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		User:         "65532:65532",
		Labels:       map[string]string{AnnotationTitle: "cuzk-daemon"},
		Annotations:  map[string]string{AnnotationVersion: "v0.1.0"},
		Created:      epoch,
		OS:           "linux",
		Architecture: "amd64",
	}
}

func TestParseReference(t *testing.T) {
	tests := []struct {
		ref, name, digest string
		ok                bool
	}{
		{testBase, "nvidia/cuda:11.8.0-base-ubuntu22.04", "sha256:79e5b2cf878ee9006f5b3738caeea34fdc7708a32db53fe3e80db0b48bd286a0", true},
		{"ghcr.io/a/b@sha256:" + strings.Repeat("a", 64), "ghcr.io/a/b", "sha256:" + strings.Repeat("a", 64), true},
		{"nvidia/cuda:11.8.0-base-ubuntu22.04", "", "", false},
		{"nvidia/cuda@sha256:abc", "", "", false},
		{"@sha256:" + strings.Repeat("a", 64), "", "", false},
		{"x@sha256:" + strings.Repeat("A", 64), "", "", false},
		{"x@sha512:" + strings.Repeat("a", 128), "", "", false},
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
			assert.Equal(t, tt.digest, r.Digest.String())
			assert.Equal(t, tt.ref, r.String())
		})
	}
}

type tarEntry struct {
	name     string
	typ      byte
	mode     int64
	uid, gid int
	link     string
	mtime    time.Time
	data     string
}

func readTar(t *testing.T, raw []byte) []tarEntry {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(raw))
	var out []tarEntry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		assert.Empty(t, h.Uname, h.Name)
		assert.Empty(t, h.Gname, h.Name)
		assert.True(t, h.AccessTime.IsZero(), h.Name)
		out = append(out, tarEntry{h.Name, h.Typeflag, h.Mode, h.Uid, h.Gid, h.Linkname, h.ModTime, string(data)})
	}
}

func TestTarNormalizes(t *testing.T) {
	img := testImage()
	entries := append(append([]Entry{}, img.Layers[0].Entries...), img.Layers[1].Entries...)
	raw, err := Tar(entries, epoch.Add(999*time.Millisecond))
	require.NoError(t, err)
	got := readTar(t, raw)
	byName := map[string]tarEntry{}
	var names []string
	for _, e := range got {
		names = append(names, e.name)
		byName[e.name] = e
		assert.True(t, e.mtime.Equal(epoch), "%s mtime %v", e.name, e.mtime)
	}
	assert.Equal(t, []string{"home/", "home/nonroot/", "lib/", "lib/x86_64-linux-gnu/", "lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
		"lib64/", "lib64/ld-linux-x86-64.so.2", "tmp/", "usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/cuzk-daemon",
		"usr/share/", "usr/share/cuzk/", "usr/share/cuzk/manifest.json"}, names)
	assert.Equal(t, tarEntry{"home/nonroot/", tar.TypeDir, 0o700, 65532, 65532, "", epoch, ""}, byName["home/nonroot/"])
	assert.Equal(t, int64(0o1777), byName["tmp/"].mode, "sticky /tmp")
	assert.Equal(t, byte(tar.TypeSymlink), byName["lib64/ld-linux-x86-64.so.2"].typ)
	assert.Equal(t, "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", byName["lib64/ld-linux-x86-64.so.2"].link)
	assert.Equal(t, int64(0o755), byName["usr/"].mode)
	assert.Zero(t, byName["usr/"].uid)
	assert.Equal(t, "\x7fELF fake daemon", byName["usr/local/bin/cuzk-daemon"].data)

	// Input order does not change the bytes; an identical duplicate merges.
	rev := append([]Entry{entries[len(entries)-1]}, entries...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	raw2, err := Tar(rev, epoch)
	require.NoError(t, err)
	assert.Equal(t, raw, raw2)
}

func TestTarRejects(t *testing.T) {
	f := func(p string) Entry { return Entry{Path: p, Kind: KindFile, Mode: 0o644} }
	tests := map[string][]Entry{
		"dotdot":       {f("../etc/passwd")},
		"unclean":      {f("a//b")},
		"dir path":     {f("a/")},
		"empty":        {f("")},
		"differs":      {f("a"), {Path: "/a", Kind: KindFile, Mode: 0o644, Data: []byte("x")}},
		"file and dir": {f("a"), f("a/b")},
		"setuid":       {{Path: "a", Kind: KindFile, Mode: 0o755 | fs.ModeSetuid}},
		"link no dest": {{Path: "a", Kind: KindSymlink, Mode: 0o777}},
		"file w/ link": {{Path: "a", Kind: KindFile, Mode: 0o644, Link: "b"}},
	}
	for name, entries := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Tar(entries, epoch)
			assert.Error(t, err)
		})
	}
}

func TestTarGz(t *testing.T) {
	files := []File{{Path: "b", Mode: 0o644, Data: []byte("b")}, {Path: "a/x", Mode: 0o755, Data: []byte("x")}}
	gz, err := TarGz(files, epoch)
	require.NoError(t, err)
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	require.NoError(t, err)
	assert.True(t, zr.ModTime.IsZero(), "gzip header carries no time")
	assert.Empty(t, zr.Name, "gzip header carries no name")
	raw, err := io.ReadAll(zr)
	require.NoError(t, err)
	want, err := Tar(Entries(files), epoch)
	require.NoError(t, err)
	assert.Equal(t, want, raw)
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

func writeTestLayout(t *testing.T, dir string) v1.Descriptor {
	t.Helper()
	img, err := Build(testImage())
	require.NoError(t, err)
	d, err := WriteLayout(dir, img, testImage().Platform(), "v0.1.0")
	require.NoError(t, err)
	return d
}

func TestWriteLayoutReproducible(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "one"), filepath.Join(t.TempDir(), "two", "layout")
	da, db := writeTestLayout(t, a), writeTestLayout(t, b)
	assert.Equal(t, da, db)
	ta, tb := treeBytes(t, a), treeBytes(t, b)
	assert.Equal(t, ta, tb, "layouts differ")
	assert.Len(t, ta, 6, "oci-layout, index.json and four blobs (manifest, config, two layers)")
	for rel, data := range ta {
		if hexName, ok := strings.CutPrefix(rel, filepath.Join("blobs", "sha256")+string(filepath.Separator)); ok {
			sum := sha256.Sum256(data)
			assert.Equal(t, hexName, hex.EncodeToString(sum[:]), "blob %s named by its content", rel)
		}
	}
}

func TestWriteLayoutConfigAndAnnotations(t *testing.T) {
	dir := t.TempDir()
	d := writeTestLayout(t, dir)
	c, err := Verify(dir)
	require.NoError(t, err)
	assert.Equal(t, d, c.Descriptor)
	assert.Equal(t, types.OCIManifestSchema1, c.Descriptor.MediaType)
	assert.Equal(t, "v0.1.0", c.Descriptor.Annotations[AnnotationRefName])
	assert.Equal(t, &v1.Platform{Architecture: "amd64", OS: "linux"}, c.Descriptor.Platform)
	assert.Equal(t, types.OCIConfigJSON, c.Manifest.Config.MediaType)
	assert.Equal(t, "2023-11-14T22:13:20Z", c.Manifest.Annotations[AnnotationCreated])
	assert.Equal(t, "v0.1.0", c.Manifest.Annotations[AnnotationVersion])
	assert.True(t, c.Config.Created.Equal(epoch))
	assert.Equal(t, "65532:65532", c.Config.Config.User)
	assert.Equal(t, []string{"/usr/local/bin/cuzk-daemon"}, c.Config.Config.Entrypoint)
	assert.Equal(t, map[string]string{AnnotationTitle: "cuzk-daemon"}, c.Config.Config.Labels)
	require.Len(t, c.Manifest.Layers, 2)
	require.Len(t, c.Config.History, 2)
	assert.Equal(t, "payload", c.Config.History[1].CreatedBy)
	for _, l := range c.Manifest.Layers {
		assert.Equal(t, types.OCILayer, l.MediaType)
	}
	layers, err := c.Image.Layers()
	require.NoError(t, err)
	rc, err := layers[1].Uncompressed()
	require.NoError(t, err)
	raw, err := io.ReadAll(rc)
	require.NoError(t, err)
	assert.Equal(t, "usr/local/bin/cuzk-daemon", readTar(t, raw)[3].name)
}

func TestVerifyDetectsDamage(t *testing.T) {
	blob := func(dir string, h v1.Hash) string { return filepath.Join(dir, "blobs", h.Algorithm, h.Hex) }
	tests := map[string]func(t *testing.T, dir string, c Checked){
		"layer bytes": func(t *testing.T, dir string, c Checked) {
			p := blob(dir, c.Manifest.Layers[1].Digest)
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			b[len(b)/2] ^= 0xff
			require.NoError(t, os.WriteFile(p, b, 0o644))
		},
		"missing config": func(t *testing.T, dir string, c Checked) {
			require.NoError(t, os.Remove(blob(dir, c.Manifest.Config.Digest)))
		},
		"index size": func(t *testing.T, dir string, c Checked) {
			b, err := os.ReadFile(filepath.Join(dir, "index.json"))
			require.NoError(t, err)
			b = bytes.Replace(b, []byte(`"size":`), []byte(`"size":1`), 1)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "index.json"), b, 0o644))
		},
		"no index": func(t *testing.T, dir string, c Checked) {
			require.NoError(t, os.Remove(filepath.Join(dir, "index.json")))
		},
	}
	for name, damage := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeTestLayout(t, dir)
			c, err := Verify(dir)
			require.NoError(t, err)
			damage(t, dir, c)
			_, err = Verify(dir)
			assert.Error(t, err)
		})
	}
}

func TestWriteRefuses(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stale"), nil, 0o644))
	img, err := Build(testImage())
	require.NoError(t, err)
	_, err = WriteLayout(dir, img, testImage().Platform(), "")
	assert.ErrorContains(t, err, "not empty")

	bad := map[string]func(*Image){
		"no layers":     func(i *Image) { i.Layers = nil },
		"empty layer":   func(i *Image) { i.Layers[1].Entries = nil },
		"no created":    func(i *Image) { i.Created = time.Time{} },
		"no platform":   func(i *Image) { i.Architecture = "" },
		"no entrypoint": func(i *Image) { i.Entrypoint, i.Cmd = nil, nil },
	}
	for name, mutate := range bad {
		t.Run(name, func(t *testing.T) {
			img := testImage()
			mutate(&img)
			_, err := Build(img)
			assert.Error(t, err)
		})
	}
}
