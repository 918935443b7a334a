package buildimage

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTwoBuildsSameDigest builds one small lock (Debian's Essential set, apt
// and hello) twice, in two cache directories with two .deb directories:
// resolution with apt, download and verification, mmdebstrap, the layers
// and the layout all run for real, and the two digests must be equal. The
// full toolkit image is checked the same way by `image:build`, whose digest
// must equal the pin in toolchain.yaml on every machine.
func TestTwoBuildsSameDigest(t *testing.T) {
	for _, tool := range []string{"mmdebstrap", "dpkg-scanpackages", "apt-get"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (`go run mage.go testdeps` installs it): the build image cannot be laid down", tool)
		}
	}
	if os.Geteuid() != 0 {
		if err := exec.Command("unshare", "--user", "--map-root-user", "true").Run(); err != nil {
			t.Skipf("neither root nor unprivileged user namespaces (%v): mmdebstrap cannot run", err)
		}
	}
	if testing.Short() {
		t.Skip("-short: lays down two Debian roots (about a minute each)")
	}
	ctx := context.Background()
	spec := Spec{Suite: "bookworm", Architecture: "amd64", Components: []string{"main"},
		Mirrors: []string{"http://deb.debian.org/debian", "http://deb.debian.org/debian-security"},
		Include: []string{"hello"}, Epoch: 1733270400}
	lock, err := Resolve(ctx, spec)
	require.NoError(t, err)
	_, ok := lock.Package("dpkg")
	assert.True(t, ok, "the closure holds the Essential set")
	_, ok = lock.Package("apt")
	assert.True(t, ok, "and apt")

	const mod = "golang.org/toolchain@v0.0.1-go1.26.8.linux-amd64"
	g := GoToolchain{Module: mod, Zip: toolchainZip(t, mod), ZipSHA256: "00"}
	var refs []string
	for i := range 2 {
		dir := t.TempDir()
		r, err := Build(ctx, Options{Lock: lock, Go: g, DebDir: filepath.Join(dir, "debs"), CacheDir: filepath.Join(dir, "images")})
		require.NoError(t, err, "build %d", i)
		assert.False(t, r.Cached)
		t.Logf("build %d: %s, %d bytes compressed, %d uncompressed", i, r.Ref, r.Compressed, r.Uncompressed)
		refs = append(refs, r.Ref)

		again, err := Build(ctx, Options{Lock: lock, Go: g, DebDir: filepath.Join(dir, "debs"), CacheDir: filepath.Join(dir, "images")})
		require.NoError(t, err)
		assert.True(t, again.Cached, "an unchanged lock never rebuilds")
		assert.Equal(t, r.Ref, again.Ref)
	}
	assert.Equal(t, refs[0], refs[1], "two builds in two directories give the same digest")
}
