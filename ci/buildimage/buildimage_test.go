package buildimage

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/ci/debian"
)

func readTestdata(t *testing.T, name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}

func TestParseAptOutput(t *testing.T) {
	pkgs, err := parsePrintURIs(readTestdata(t, "print-uris.txt"))
	require.NoError(t, err)
	require.Len(t, pkgs, 3)
	assert.Equal(t, debian.Package{Name: "perl-base", Version: "1:5.36.0-7+deb12u2", Arch: "amd64"}, pkgs[2], "the epoch's %3a is a colon")

	records := readTestdata(t, "show.txt")
	assert.Equal(t, []string{"base-files", "bash", "perl-base"}, essential(records))
	require.NoError(t, fillFromRecords(pkgs, records))
	assert.Equal(t, strings.Repeat("3", 64), pkgs[2].SHA256)
	assert.Equal(t, "pool/main/p/perl/perl-base_5.36.0-7+deb12u2_amd64.deb", pkgs[2].Path)

	missing := []debian.Package{{Name: "gcc", Version: "4:12.2.0-3", Arch: "amd64"}}
	assert.ErrorContains(t, fillFromRecords(missing, records), "no index record for gcc=4:12.2.0-3")
	_, err = parsePrintURIs("Reading package lists...\n")
	assert.ErrorContains(t, err, "no packages")
	_, err = parsePrintURIs("'http://x/y.deb' y.deb 1 MD5Sum:0\n")
	assert.ErrorContains(t, err, "name_version_arch")
}

func testLock() Lock {
	l := Lock{Version: LockVersion, Suite: "bookworm", Architecture: "amd64", Components: []string{"main"},
		Mirrors: []string{"http://deb.example/debian", "http://deb.example/debian-security"},
		Include: []string{"hello"}, Epoch: 1733270400}
	for i, n := range []string{"bash", "hello", "libc6"} {
		l.Packages = append(l.Packages, debian.Package{Name: n, Version: "1.0-" + string(rune('1'+i)), Arch: "amd64",
			SHA256: strings.Repeat(string(rune('a'+i)), 64), Path: "pool/main/" + n[:1] + "/" + n + "/" + n + ".deb"})
	}
	return l
}

func TestLockRoundTripAndID(t *testing.T) {
	l := testLock()
	require.NoError(t, l.Validate())
	path := filepath.Join(t.TempDir(), "lock.json")
	require.NoError(t, WriteLock(path, l))
	back, err := LoadLock(path)
	require.NoError(t, err)
	assert.Equal(t, l, back)
	assert.Equal(t, l.ID(), back.ID())

	changed := testLock()
	changed.Packages[1].Version = "1.0-9"
	assert.NotEqual(t, l.ID(), changed.ID(), "any package change names another image")
	other := testLock()
	other.Epoch++
	assert.NotEqual(t, l.ID(), other.ID())
	assert.NotEqual(t, Key(l, GoToolchain{Module: "m@v1", ZipSHA256: "aa"}), Key(l, GoToolchain{Module: "m@v2", ZipSHA256: "aa"}),
		"the Go toolchain is part of the image key")
}

func TestLockValidate(t *testing.T) {
	bad := map[string]func(*Lock){
		"version":       func(l *Lock) { l.Version = 2 },
		"no epoch":      func(l *Lock) { l.Epoch = 0 },
		"no mirrors":    func(l *Lock) { l.Mirrors = nil },
		"unsorted":      func(l *Lock) { l.Packages[0], l.Packages[1] = l.Packages[1], l.Packages[0] },
		"duplicate":     func(l *Lock) { l.Packages[1].Name = "bash" },
		"bad sha256":    func(l *Lock) { l.Packages[0].SHA256 = "xyz" },
		"no path":       func(l *Lock) { l.Packages[0].Path = "" },
		"include lacks": func(l *Lock) { l.Include = append(l.Include, "git") },
	}
	for name, mutate := range bad {
		t.Run(name, func(t *testing.T) {
			l := testLock()
			mutate(&l)
			assert.Error(t, l.Validate())
		})
	}
	_, err := ParseLock([]byte(`{"version":1,"surprise":true}`))
	assert.ErrorContains(t, err, "surprise", "unknown fields are refused")
}

func TestCheckInstalled(t *testing.T) {
	l := testLock()
	ok := "bash\t1.0-1\tamd64\nhello\t1.0-2\tamd64\nlibc6\t1.0-3\tamd64\n"
	require.NoError(t, checkInstalled(l, []byte(ok)))
	err := checkInstalled(l, []byte("bash\t1.0-1\tamd64\nhello\t2.0\tamd64\nmawk\t1.3\tamd64\n"))
	require.Error(t, err)
	for _, want := range []string{"hello: locked 1.0-2, installed 2.0", "locked but not installed: libc6=1.0-3", "installed but not locked: mawk=1.3"} {
		assert.ErrorContains(t, err, want)
	}
}

// toolchainZip writes a module zip shaped like golang.org/toolchain's.
func toolchainZip(t *testing.T, prefix string) string {
	path := filepath.Join(t.TempDir(), "go.zip")
	f, err := os.Create(path)
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	for name, body := range map[string]string{"bin/go": "#!go", "pkg/tool/linux_amd64/compile": "cc", "src/fmt/print.go": "package fmt", "VERSION": "go1.26.8"} {
		w, err := zw.Create(prefix + "/" + name)
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
	return path
}

func TestGoToolchainLayer(t *testing.T) {
	const mod = "golang.org/toolchain@v0.0.1-go1.26.8.linux-amd64"
	zipPath := toolchainZip(t, mod)
	epoch := time.Unix(1733270400, 0)
	var a, b bytes.Buffer
	require.NoError(t, goToolchainTar(zipPath, mod, epoch, &a))
	require.NoError(t, goToolchainTar(zipPath, mod, epoch, &b))
	assert.Equal(t, a.Bytes(), b.Bytes(), "deterministic")

	modes := map[string]int64{}
	tr := tar.NewReader(&a)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		names = append(names, h.Name)
		modes[h.Name] = h.Mode
		assert.True(t, h.ModTime.Equal(epoch), h.Name)
		assert.Zero(t, h.Uid)
	}
	assert.Equal(t, []string{"usr/", "usr/local/", "usr/local/go/", "usr/local/go/VERSION", "usr/local/go/bin/", "usr/local/go/bin/go",
		"usr/local/go/pkg/", "usr/local/go/pkg/tool/", "usr/local/go/pkg/tool/linux_amd64/", "usr/local/go/pkg/tool/linux_amd64/compile",
		"usr/local/go/src/", "usr/local/go/src/fmt/", "usr/local/go/src/fmt/print.go"}, names)
	assert.EqualValues(t, 0o755, modes["usr/local/go/bin/go"])
	assert.EqualValues(t, 0o755, modes["usr/local/go/pkg/tool/linux_amd64/compile"])
	assert.EqualValues(t, 0o644, modes["usr/local/go/src/fmt/print.go"])

	err := goToolchainTar(zipPath, "golang.org/toolchain@other", epoch, io.Discard)
	assert.ErrorContains(t, err, "outside")
}

func TestWriteLayerDigests(t *testing.T) {
	payload := bytes.Repeat([]byte("cuzk layer "), 10000)
	epoch := time.Unix(1733270400, 0)
	l, err := writeLayer(filepath.Join(t.TempDir(), "l.tar.gz"), epoch, func(w io.Writer) error {
		_, err := w.Write(payload)
		return err
	})
	require.NoError(t, err)
	sum := sha256.Sum256(payload)
	assert.Equal(t, hex.EncodeToString(sum[:]), l.diffID.Hex)

	// go-containerregistry computes the same digests reading the blob.
	ref, err := tarball.LayerFromFile(l.path)
	require.NoError(t, err)
	d, err := ref.Digest()
	require.NoError(t, err)
	assert.Equal(t, d, l.digest)
	diff, err := ref.DiffID()
	require.NoError(t, err)
	assert.Equal(t, diff, l.diffID)
	size, err := ref.Size()
	require.NoError(t, err)
	assert.Equal(t, size, l.size)

	rc, err := l.Uncompressed()
	require.NoError(t, err)
	got, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	assert.Equal(t, payload, got)
	zr, err := gzip.NewReader(bytes.NewReader(mustRead(t, l.path)))
	require.NoError(t, err)
	assert.True(t, epoch.Equal(zr.ModTime), "the gzip header holds the epoch, nothing else: %v", zr.ModTime)
}

func mustRead(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// fakeEntry writes a cache entry for o the way Build does, around a small
// layer, and returns its result.
func fakeEntry(t *testing.T, o Options) Result {
	key := Key(o.Lock, o.Go)
	work := filepath.Join(o.CacheDir, "work")
	require.NoError(t, os.MkdirAll(work, 0o755))
	epoch := time.Unix(o.Lock.Epoch, 0)
	root, err := writeLayer(filepath.Join(work, "a.tar.gz"), epoch, func(w io.Writer) error {
		tw := tar.NewWriter(w)
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: "etc/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: epoch}))
		return tw.Close()
	})
	require.NoError(t, err)
	goLayer, err := writeLayer(filepath.Join(work, "b.tar.gz"), epoch, func(w io.Writer) error {
		return goToolchainTar(toolchainZip(t, o.Go.Module), o.Go.Module, epoch, w)
	})
	require.NoError(t, err)
	r, err := writeEntry(o, root, goLayer, 10, 20, filepath.Join(o.CacheDir, key), key, epoch)
	require.NoError(t, err)
	return r
}

func TestCacheEntry(t *testing.T) {
	o := Options{Lock: testLock(), CacheDir: t.TempDir(), Go: GoToolchain{Module: "golang.org/toolchain@v0.0.1-go1.26.8.linux-amd64", ZipSHA256: strings.Repeat("e", 64)}}
	_, ok := Cached(o)
	assert.False(t, ok)
	built := fakeEntry(t, o)
	assert.False(t, built.Cached)
	assert.True(t, strings.HasPrefix(built.Ref, Repository+":"+Key(o.Lock, o.Go)[:12]+"@sha256:"), built.Ref)
	assert.Equal(t, Repository+":"+Key(o.Lock, o.Go)[:12], built.Tag())

	hit, ok := Cached(o)
	require.True(t, ok)
	assert.True(t, hit.Cached)
	assert.Equal(t, built.Ref, hit.Ref)
	assert.Equal(t, built.Config, hit.Config)

	// Twice from the same inputs: the same image.
	o2 := o
	o2.CacheDir = t.TempDir()
	assert.Equal(t, built.Ref, fakeEntry(t, o2).Ref)

	archive, err := Archive(hit)
	require.NoError(t, err)
	again, err := Archive(hit)
	require.NoError(t, err)
	assert.Equal(t, archive, again, "written once per entry")

	// A truncated layer blob: a miss, and the entry is gone.
	m, err := os.ReadFile(filepath.Join(hit.Layout, "index.json"))
	require.NoError(t, err)
	require.Contains(t, string(m), built.Digest.Hex)
	blobs, err := filepath.Glob(filepath.Join(hit.Layout, "blobs", "sha256", "*"))
	require.NoError(t, err)
	for _, b := range blobs {
		if st, _ := os.Stat(b); st.Size() > 1000 {
			require.NoError(t, os.Truncate(b, st.Size()-1))
		}
	}
	_, ok = Cached(o)
	assert.False(t, ok, "a damaged entry is a miss")
	_, err = os.Stat(filepath.Dir(hit.Layout))
	assert.True(t, os.IsNotExist(err), "and is removed")
}
