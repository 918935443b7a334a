package debian

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/ulikunitz/xz"

	"github.com/cuzk-dev/cuzk/ci/oci"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// makeDeb builds a .deb (ar: debian-binary, control.tar.xz, data.tar.xz)
// whose data holds hdrs with their bodies.
func makeDeb(t *testing.T, hdrs []*tar.Header, bodies map[string]string) []byte {
	t.Helper()
	var data bytes.Buffer
	tw := tar.NewWriter(&data)
	for _, h := range hdrs {
		h.Size = int64(len(bodies[h.Name]))
		require.NoError(t, tw.WriteHeader(h))
		_, err := tw.Write([]byte(bodies[h.Name]))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	xzed := func(b []byte) []byte {
		var out bytes.Buffer
		w, err := xz.NewWriter(&out)
		require.NoError(t, err)
		_, err = w.Write(b)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		return out.Bytes()
	}
	var ar bytes.Buffer
	ar.WriteString(arMagic)
	for _, m := range []struct {
		name string
		body []byte
	}{{"debian-binary", []byte("2.0\n")}, {"control.tar.xz", xzed([]byte("odd"))}, {"data.tar.xz", xzed(data.Bytes())}} {
		fmt.Fprintf(&ar, "%-16s%-12d%-6d%-6d%-8o%-10d`\n", m.name, 0, 0, 0, 0o644, len(m.body))
		ar.Write(m.body)
		if len(m.body)%2 == 1 {
			ar.WriteByte('\n')
		}
	}
	return ar.Bytes()
}

func TestDataEntries(t *testing.T) {
	deb := makeDeb(t, []*tar.Header{
		{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "./usr/", Typeflag: tar.TypeDir, Mode: 0o755, Uid: 7, Uname: "x"},
		{Name: "./usr/bin/tool", Typeflag: tar.TypeReg, Mode: 0o4755},
		{Name: "./usr/lib/libx.so.1", Typeflag: tar.TypeSymlink, Linkname: "libx.so.1.2"},
		{Name: "./usr/lib/libx.so.1.2", Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: "./usr/lib/again", Typeflag: tar.TypeLink, Linkname: "./usr/lib/libx.so.1.2"},
	}, map[string]string{"./usr/bin/tool": "#!", "./usr/lib/libx.so.1.2": "lib"})
	got, err := DataEntries(deb)
	require.NoError(t, err)
	assert.Equal(t, []oci.Entry{
		{Path: "/usr", Kind: oci.KindDir, Mode: 0o755},
		{Path: "/usr/bin/tool", Kind: oci.KindFile, Mode: 0o755, Data: []byte("#!")},
		{Path: "/usr/lib/libx.so.1", Kind: oci.KindSymlink, Mode: 0, Link: "libx.so.1.2"},
		{Path: "/usr/lib/libx.so.1.2", Kind: oci.KindFile, Mode: 0o644, Data: []byte("lib")},
		{Path: "/usr/lib/again", Kind: oci.KindHardlink, Link: "/usr/lib/libx.so.1.2"},
	}, got, "owner dropped, set-id dropped, root skipped")
	_, err = oci.Tar(got, epochForTest)
	require.NoError(t, err, "entries are valid layer entries")

	_, err = DataEntries([]byte("not a deb"))
	assert.ErrorContains(t, err, "not an ar archive")
	_, err = DataEntries([]byte(arMagic + "debian-binary   0           0     0     644     4         `\n2.0\n"))
	assert.ErrorContains(t, err, "no data.tar member")
	fifo := makeDeb(t, []*tar.Header{{Name: "./p", Typeflag: tar.TypeFifo, Mode: 0o644}}, nil)
	_, err = DataEntries(fifo)
	assert.ErrorContains(t, err, "unsupported entry type")
}

var epochForTest = time.Unix(1_700_000_000, 0)

func pin(name string, deb []byte) Package {
	sum := sha256.Sum256(deb)
	return Package{Name: name, Version: "1:1.0-1", Arch: "all", SHA256: hex.EncodeToString(sum[:])}
}

func TestFetchVerifiesAndCaches(t *testing.T) {
	deb := makeDeb(t, []*tar.Header{{Name: "./etc/x", Typeflag: tar.TypeReg, Mode: 0o644}}, map[string]string{"./etc/x": "x"})
	p := pin("pkg", deb)
	assert.Equal(t, "pkg_1%3a1.0-1_all.deb", p.FileName())
	downloads := 0
	serve := func(content []byte) func(context.Context, string, Package) error {
		return func(_ context.Context, dir string, p Package) error {
			downloads++
			return os.WriteFile(filepath.Join(dir, p.FileName()), content, 0o644)
		}
	}
	dir := filepath.Join(t.TempDir(), "debs")
	f := Fetcher{Dir: dir, Download: serve(deb)}
	paths, err := f.Fetch(context.Background(), []Package{p})
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, p.FileName())}, paths)
	assert.Equal(t, 1, downloads)

	_, err = f.Fetch(context.Background(), []Package{p})
	require.NoError(t, err)
	assert.Equal(t, 1, downloads, "second fetch is a cache hit")

	require.NoError(t, os.WriteFile(paths[0], []byte("damaged"), 0o644))
	_, err = f.Fetch(context.Background(), []Package{p})
	require.NoError(t, err)
	assert.Equal(t, 2, downloads, "a damaged cached file is fetched again")
	b, err := os.ReadFile(paths[0])
	require.NoError(t, err)
	assert.Equal(t, deb, b)

	bad := Fetcher{Dir: t.TempDir(), Download: serve([]byte("evil"))}
	_, err = bad.Fetch(context.Background(), []Package{p})
	assert.True(t, errors.Is(err, ErrChecksum), "%v", err)
	ents, err := os.ReadDir(bad.Dir)
	require.NoError(t, err)
	assert.Empty(t, ents, "nothing unverified is kept")

	off := Fetcher{Dir: t.TempDir(), Offline: true}
	_, err = off.Fetch(context.Background(), []Package{p})
	assert.ErrorContains(t, err, "downloads are off")

	_, err = f.Fetch(context.Background(), []Package{{Name: "xy", Version: "1", Arch: "all", SHA256: "abc"}})
	assert.ErrorContains(t, err, "sha256")
}

func TestRootfsGenerated(t *testing.T) {
	deb := makeDeb(t, []*tar.Header{
		{Name: "./usr/share/ca-certificates/mozilla/B.crt", Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: "./usr/share/ca-certificates/mozilla/A.crt", Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: "./usr/share/doc/pkg/copyright", Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: "./usr/share/doc/pkg/changelog.gz", Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: "./usr/share/man/man1/x.1.gz", Typeflag: tar.TypeReg, Mode: 0o644},
	}, map[string]string{"./usr/share/ca-certificates/mozilla/A.crt": "A\n", "./usr/share/ca-certificates/mozilla/B.crt": "B"})
	p := filepath.Join(t.TempDir(), "x.deb")
	require.NoError(t, os.WriteFile(p, deb, 0o644))
	entries, err := Rootfs([]string{p})
	require.NoError(t, err)
	byPath := map[string]oci.Entry{}
	for _, e := range entries {
		byPath[e.Path] = e
	}
	assert.Equal(t, "A\nB\n", string(byPath[CABundle].Data), "certificates in name order")
	assert.Contains(t, byPath, "/usr/share/doc/pkg/copyright", "licences stay")
	assert.NotContains(t, byPath, "/usr/share/doc/pkg/changelog.gz")
	assert.NotContains(t, byPath, "/usr/share/man/man1/x.1.gz")
	assert.Contains(t, string(byPath["/etc/passwd"].Data), "nonroot:x:65532:65532:")
	assert.Equal(t, NonrootUID, byPath["/home/nonroot"].UID)
	assert.Equal(t, fs.ModeSticky|0o777, byPath["/tmp"].Mode)
	assert.Equal(t, oci.Entry{Path: KeyDir, Kind: oci.KindDir, Mode: 0o750, UID: NonrootUID, GID: NonrootUID}, byPath[KeyDir],
		"the key volume's directory, writable by the daemon's user")
}

// TestPinnedPackages fetches the pinned base packages with apt-get and
// checks the unpacked root has what a cgo binary needs to start.
func TestPinnedPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: downloads the pinned Debian packages")
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Skip("apt-get not installed: the pinned .deb files cannot be fetched here")
	}
	pins, err := toolchain.Load(nil)
	require.NoError(t, err)
	var pkgs []Package
	for _, d := range pins.BasePackages {
		pkgs = append(pkgs, Package{Name: d.Name, Version: d.Version, Arch: d.Arch, SHA256: d.SHA256})
	}
	dir, err := DefaultCacheDir()
	require.NoError(t, err)
	paths, err := Fetcher{Dir: dir}.Fetch(context.Background(), pkgs)
	if err != nil && strings.Contains(err.Error(), "apt-get download") {
		t.Skipf("apt-get cannot download the pinned packages here (no Debian 12 sources?): %v", err)
	}
	require.NoError(t, err)
	entries, err := Rootfs(paths)
	require.NoError(t, err)
	byPath := map[string]oci.Entry{}
	for _, e := range entries {
		byPath[e.Path] = e
	}
	for _, want := range []string{"/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/libc.so.6",
		"/lib/x86_64-linux-gnu/libgcc_s.so.1", "/usr/share/zoneinfo/UTC", "/etc/services", CABundle} {
		assert.Contains(t, byPath, want)
	}
	assert.Greater(t, strings.Count(string(byPath[CABundle].Data), "BEGIN CERTIFICATE"), 100)
}

func TestHTTPDownload(t *testing.T) {
	deb := makeDeb(t, []*tar.Header{{Name: "./etc/y", Typeflag: tar.TypeReg, Mode: 0o644}}, map[string]string{"./etc/y": "y"})
	p := pin("pkg", deb)
	p.Path = "pool/main/p/pkg/pkg_1.0-1_all.deb" // the archive drops the epoch
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debian-security/"+p.Path {
			http.NotFound(w, r)
			return
		}
		w.Write(deb)
	}))
	defer srv.Close()
	f := Fetcher{Dir: t.TempDir(), Mirrors: []string{srv.URL + "/debian", srv.URL + "/debian-security/"},
		Download: func(ctx context.Context, dir string, p Package) error {
			return HTTPDownload(ctx, srv.Client(), []string{srv.URL + "/debian", srv.URL + "/debian-security/"}, dir, p)
		}}
	paths, err := f.Fetch(context.Background(), []Package{p})
	require.NoError(t, err, "the second mirror serves it")
	assert.Equal(t, deb, mustReadFile(t, paths[0]))

	err = HTTPDownload(context.Background(), srv.Client(), []string{srv.URL + "/nowhere"}, t.TempDir(), p)
	assert.ErrorContains(t, err, "404")
}

func mustReadFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}
