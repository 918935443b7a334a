package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/ci/debian"
	"github.com/cuzk-dev/cuzk/ci/oci"
	"github.com/cuzk-dev/cuzk/toolchain"
)

var epoch = time.Unix(1_750_000_000, 0).UTC()

// copyTree copies src to a new directory dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	}))
}

// testEnv is the environment for test builds: no network access.
func testEnv() []string {
	return append(os.Environ(), "GOPROXY=off", "GOFLAGS=", "GOWORK=off")
}

func helloOptions(t *testing.T, root string) Options {
	return Options{
		Root: root, OutDir: filepath.Join(root, "dist"), Version: "v0.0.1-test", Epoch: epoch,
		Packages: []string{"./cmd/cuzk-daemon", "./cmd/hello"}, Env: testEnv(),
		Extra: append([]Extra{{Src: filepath.Join(root, "cmd", "cuzk-daemon", "manifest.json"), Dst: KernelManifest}}, LicenseExtras(root)...),
	}
}

// testBase is a small base layer standing in for the Debian packages.
func testBase() Base {
	return Base{
		Packages: []debian.Package{{Name: "libc6", Version: "2.36-9+deb12u14", Arch: "amd64", SHA256: strings.Repeat("ab", 32)}},
		Entries: []oci.Entry{
			{Path: "/etc/passwd", Kind: oci.KindFile, Mode: 0o644, Data: []byte("root:x:0:0::/root:/sbin/nologin\n")},
			{Path: "/tmp", Kind: oci.KindDir, Mode: 0o777 | fs.ModeSticky},
		},
	}
}

// testSource names a fake commit for the SBOM and provenance.
var testSource = Source{Commit: strings.Repeat("c", 40), Repository: "https://github.com/cuzk-dev/cuzk", Pins: map[string]string{"go": "1.26.8"}}

type entry struct {
	name  string
	mode  int64
	uid   int
	mtime time.Time
	data  []byte
}

func readArchive(t *testing.T, path string) []entry {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	var out []entry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		out = append(out, entry{h.Name, h.Mode, h.Uid, h.ModTime, data})
	}
}

func TestBuildReproducibleAcrossDirectories(t *testing.T) {
	ctx := context.Background()
	a := filepath.Join(t.TempDir(), "a")
	b := filepath.Join(t.TempDir(), "deeper", "checkout-b")
	copyTree(t, filepath.Join("testdata", "hello"), a)
	copyTree(t, filepath.Join("testdata", "hello"), b)

	oa := helloOptions(t, a)
	if !testing.Short() {
		// A cold build cache for one side, so the compiler and cgo really
		// run there instead of both builds sharing cached objects.
		oa.Env = append(oa.Env, "GOCACHE="+t.TempDir())
	}
	ba, err := Build(ctx, oa)
	require.NoError(t, err)
	ob := helloOptions(t, b)
	// A hostile shell must not leak into the release.
	ob.Env = append(ob.Env, "GOFLAGS=-tags=leak", "CGO_CFLAGS=-O0 -DLEAK=1", "GOAMD64=v3", "CGO_ENABLED=0")
	bb, err := Build(ctx, ob)
	require.NoError(t, err)

	archA, err := os.ReadFile(ba.Archive)
	require.NoError(t, err)
	archB, err := os.ReadFile(bb.Archive)
	require.NoError(t, err)
	require.Equal(t, filepath.Base(ba.Archive), filepath.Base(bb.Archive))
	assert.True(t, bytes.Equal(archA, archB), "archives differ: %s vs %s", ba.ArchiveSHA256, bb.ArchiveSHA256)
	sumsA, err := os.ReadFile(ba.Sums)
	require.NoError(t, err)
	sumsB, err := os.ReadFile(bb.Sums)
	require.NoError(t, err)
	assert.Equal(t, sumsA, sumsB)
	sum := sha256.Sum256(archA)
	assert.Equal(t, hex.EncodeToString(sum[:])+"  cuzk-v0.0.1-test-"+ba.Options.GOOS+"-"+ba.Options.GOARCH+".tar.gz\n", string(sumsA))

	checkArchive(t, ba)
	checkBinariesRun(t, ba)

	// The whole release directory, image digest included, is the same.
	oa.Packages, ob.Packages = ba.Options.Packages, bb.Options.Packages
	ma, err := Make(ctx, oa, testBase(), testSource)
	require.NoError(t, err)
	mb, err := Make(ctx, ob, testBase(), testSource)
	require.NoError(t, err)
	assert.Equal(t, ma.Image.Digest, mb.Image.Digest, "image manifests differ")
	require.NoError(t, CompareDirs(ma.Dir, mb.Dir))
	v, err := Verify(ma.Dir)
	require.NoError(t, err)
	assert.Equal(t, ma.Image.Digest.String(), v.ImageDigest)
	assert.Equal(t, testSource.Commit, v.Commit)
	assert.Equal(t, "v0.0.1-test", v.Version)
	assert.Equal(t, epoch.Unix(), v.Epoch)
}

// checkArchive asserts sorted entries, fixed owners/mtimes/modes, and that
// the inner SHA256SUMS describes the other entries.
func checkArchive(t *testing.T, b Bundle) {
	t.Helper()
	entries := readArchive(t, b.Archive)
	prefix := b.Options.Name() + "/"
	var names []string
	byName := map[string][]byte{}
	for _, e := range entries {
		names = append(names, e.name)
		byName[strings.TrimPrefix(e.name, prefix)] = e.data
		assert.Zero(t, e.uid, e.name)
		assert.True(t, e.mtime.Equal(epoch), "%s mtime %v", e.name, e.mtime)
		switch {
		case strings.HasSuffix(e.name, "/"), strings.Contains(e.name, "/bin/"):
			assert.Equal(t, int64(0o755), e.mode, e.name)
		default:
			assert.Equal(t, int64(0o644), e.mode, e.name)
		}
	}
	assert.Equal(t, []string{prefix, prefix + "LICENSE", prefix + "LICENSE-APACHE", prefix + "LICENSE-MIT", prefix + "SHA256SUMS",
		prefix + "bin/", prefix + "bin/cuzk-daemon", prefix + "bin/hello", prefix + "share/", prefix + "share/cuzk/",
		prefix + "share/cuzk/manifest.json"}, names)
	var want strings.Builder
	for _, p := range []string{"LICENSE", "LICENSE-APACHE", "LICENSE-MIT", "bin/cuzk-daemon", "bin/hello", "share/cuzk/manifest.json"} {
		sum := sha256.Sum256(byName[p])
		want.WriteString(hex.EncodeToString(sum[:]) + "  " + p + "\n")
	}
	assert.Equal(t, want.String(), string(byName["SHA256SUMS"]))
}

// checkBinariesRun executes the built binaries (same OS/arch as the test).
func checkBinariesRun(t *testing.T, b Bundle) {
	t.Helper()
	dir := t.TempDir()
	for _, f := range b.Files {
		if !strings.HasPrefix(f.Path, "bin/") {
			continue
		}
		p := filepath.Join(dir, filepath.Base(f.Path))
		require.NoError(t, os.WriteFile(p, f.Data, 0o755))
		out, err := exec.Command(p).CombinedOutput()
		require.NoError(t, err, "%s: %s", f.Path, out)
		want := map[string]string{"cuzk-daemon": "daemon 1\n", "hello": "hello 42\n"}[filepath.Base(f.Path)]
		assert.Equal(t, want, string(out), f.Path)
	}
}

func TestBundleImage(t *testing.T) {
	b := Bundle{Options: Options{Version: "v1.2.3", Epoch: epoch, GOOS: "linux", GOARCH: "amd64"},
		Files: []oci.File{
			{Path: "SHA256SUMS", Mode: 0o644, Data: []byte("x")},
			{Path: "bin/cuzk-bench", Mode: 0o755, Data: []byte("bench")},
			{Path: "bin/cuzk-daemon", Mode: 0o755, Data: []byte("daemon")},
			{Path: "share/cuzk/manifest.json", Mode: 0o644, Data: []byte("{}")},
		}}
	img, err := b.Image(testBase())
	require.NoError(t, err)
	require.Len(t, img.Layers, 2, "base, payload")
	var paths []string
	for _, e := range img.Layers[1].Entries {
		paths = append(paths, e.Path)
	}
	assert.Equal(t, []string{"/usr/local/bin/cuzk-bench", "/usr/local/bin/cuzk-daemon", "/usr/share/cuzk/manifest.json"}, paths)
	assert.Equal(t, testBase().Entries, img.Layers[0].Entries)
	assert.Contains(t, img.Layers[0].CreatedBy, "libc6=2.36-9+deb12u14")
	assert.Equal(t, []string{"/usr/local/bin/cuzk-daemon"}, img.Entrypoint)
	assert.Equal(t, "65532:65532", img.User)
	assert.Contains(t, img.Env, "NVIDIA_VISIBLE_DEVICES=all")
	assert.True(t, img.Created.Equal(epoch))

	dir := t.TempDir()
	d, err := b.WriteImage(dir, testBase())
	require.NoError(t, err)
	c, err := oci.Verify(dir)
	require.NoError(t, err)
	assert.Equal(t, d.Digest, c.Descriptor.Digest)
	assert.Equal(t, "v1.2.3", c.Descriptor.Annotations[oci.AnnotationRefName])
	assert.Equal(t, "v1.2.3", c.Config.Config.Labels[oci.AnnotationVersion])

	b.Files = b.Files[:2] // only cuzk-bench: it becomes the entrypoint
	img, err = b.Image(testBase())
	require.NoError(t, err)
	assert.Equal(t, []string{"/usr/local/bin/cuzk-bench"}, img.Entrypoint)
	b.Files = b.Files[:1]
	_, err = b.Image(testBase())
	assert.ErrorContains(t, err, "no cuzk-daemon")
}

func TestOptions(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "daemon", "cmd", "cuzk-daemon"), 0o755))
	tests := map[string]struct {
		o       Options
		wantErr string
	}{
		"no root":     {Options{OutDir: "x", Epoch: epoch}, "required"},
		"no epoch":    {Options{Root: root, OutDir: "x"}, "Epoch"},
		"bad version": {Options{Root: root, OutDir: "x", Epoch: epoch, Version: "a/b"}, "version"},
		"no packages": {Options{Root: t.TempDir(), OutDir: "x", Epoch: epoch}, "none of"},
		"name clash":  {Options{Root: root, OutDir: "x", Epoch: epoch, Packages: []string{"./a/x", "./b/x"}}, "both build"},
		"defaults":    {Options{Root: root, OutDir: "x", Epoch: epoch}, ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			o, err := tt.o.withDefaults()
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []string{"./daemon/cmd/cuzk-daemon"}, o.Packages, "only existing default packages")
			assert.Equal(t, "dev", o.Version)
			assert.Equal(t, "cuzk-dev-"+o.GOOS+"-"+o.GOARCH, o.Name())
			assert.Contains(t, o.PinnedEnv(), "GOTOOLCHAIN=local")
			assert.Contains(t, o.PinnedEnv(), "CGO_ENABLED=1")
			assert.Contains(t, o.PinnedEnv(), "SOURCE_DATE_EPOCH=1750000000")
		})
	}
}

func TestParseEpoch(t *testing.T) {
	tests := []struct {
		env  []string
		want int64
		ok   bool
	}{
		{[]string{"A=1", "SOURCE_DATE_EPOCH=1700000000"}, 1700000000, true},
		{[]string{"SOURCE_DATE_EPOCH= 0 "}, 0, true},
		{[]string{"SOURCE_DATE_EPOCH=-5"}, 0, false},
		{[]string{"SOURCE_DATE_EPOCH=yesterday"}, 0, false},
		{nil, 0, false},
	}
	for _, tt := range tests {
		got, err := ParseEpoch(tt.env)
		if !tt.ok {
			assert.Error(t, err, "%v", tt.env)
			continue
		}
		require.NoError(t, err, "%v", tt.env)
		assert.Equal(t, tt.want, got.Unix())
	}
}

func TestGoVersionMismatch(t *testing.T) {
	o := helloOptions(t, filepath.Join("testdata", "hello"))
	o.GoVersion = "0.0.1"
	_, err := Build(context.Background(), o)
	assert.ErrorContains(t, err, "pins want go0.0.1")
}

func TestEpochFromGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_COMMITTER_DATE=@1600000000 +0000", "GIT_AUTHOR_DATE=@1500000000 +0000",
			"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	run("init", "-q")
	run("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "x")
	got, err := EpochFromGit(context.Background(), dir)
	require.NoError(t, err)
	assert.Equal(t, int64(1600000000), got.Unix())
	_, err = EpochFromGit(context.Background(), t.TempDir())
	assert.Error(t, err)
}

// realRelease builds the repository's real release (Run) twice: in the
// repository with the usual build cache, and in a copy elsewhere with a
// cold one (unless -short). It skips visibly where the daemon or its
// kernels are not there yet.
func realRelease(t *testing.T) (a, b Dist) {
	t.Helper()
	repo := needRealRelease(t)
	pins, err := toolchain.Load(nil)
	require.NoError(t, err)
	copyRoot := filepath.Join(t.TempDir(), "elsewhere", "cuzk")
	copyRepo(t, repo, copyRoot)
	env := append(testEnv(), "SOURCE_DATE_EPOCH=1750000000", "RELEASE_VERSION=v0.0.0-test", EnvCommit+"="+strings.Repeat("e", 40))
	var dists []Dist
	for i, root := range []string{repo, copyRoot} {
		e := env
		if i == 1 {
			e = append(e, "GOCACHE="+t.TempDir()) // a cold cache: the compiler and cgo really run
		}
		d, err := Run(context.Background(), RunOptions{Root: root, OutDir: filepath.Join(t.TempDir(), "dist"), Pins: pins, Environ: e})
		require.NoError(t, err)
		t.Logf("%s: archive %s, image %s", root, d.Bundle.ArchiveSHA256, d.Image.Digest)
		dists = append(dists, d)
	}
	return dists[0], dists[1]
}

// TestRealReleaseReproducibleAndRuns checks the real release: two builds
// in different directories with different build caches are byte-identical
// (image digest included), Verify passes, and the image runs in podman.
func TestRealReleaseReproducibleAndRuns(t *testing.T) {
	a, b := realRelease(t)
	assert.Equal(t, a.Image.Digest, b.Image.Digest, "image digests differ")
	require.NoError(t, CompareDirs(a.Dir, b.Dir))
	v, err := Verify(a.Dir)
	require.NoError(t, err)
	assert.NotEmpty(t, v.Manifest.Kernels)
	t.Run("podman", func(t *testing.T) { checkImageInPodman(t, a, v) })
}

// TestRealReleaseRebuilds releases the repository at HEAD and checks that
// Rebuild (a fresh clone of the commit the provenance names, released
// again) gives the same bytes. It needs a clean git checkout: a release of
// uncommitted changes cannot be rebuilt from its commit.
func TestRealReleaseRebuilds(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	if testing.Short() {
		t.Skip("-short: releases the repository twice")
	}
	if len(Packages(repo)) == 0 {
		t.Skipf("no daemon main package yet under %s", repo)
	}
	if _, err := os.Stat(KernelManifestPath(repo)); err != nil {
		t.Skipf("kernels not materialized (%v): `go run mage.go test` builds them first", err)
	}
	out, err := exec.Command("git", "-C", repo, "status", "--porcelain", "--untracked-files=no").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): no commit to rebuild from", err)
	}
	if len(bytes.TrimSpace(out)) > 0 {
		t.Skipf("uncommitted changes in %s: a rebuild from HEAD would differ (%d changed files)", repo, bytes.Count(out, []byte("\n")))
	}
	pins, err := toolchain.Load(nil)
	require.NoError(t, err)
	env := append(testEnv(), "SOURCE_DATE_EPOCH=1750000000", "RELEASE_VERSION=v0.0.0-rebuild")
	d, err := Run(context.Background(), RunOptions{Root: repo, OutDir: filepath.Join(t.TempDir(), "dist"), Pins: pins, Environ: env})
	require.NoError(t, err)
	require.NoError(t, Rebuild(context.Background(), RebuildOptions{Dir: d.Dir, Repo: repo, Env: testEnv(), Unsigned: true}))
}

// copyRepo copies the module tree without version control and build outputs.
func copyRepo(t *testing.T, src, dst string) {
	t.Helper()
	skip := map[string]bool{".git": true, ".gpu": true, "dist": true, "bin": true}
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skip[rel] {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil // sockets, links: not part of a build
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	}))
}
