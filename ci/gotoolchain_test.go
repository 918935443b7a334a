package ci

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeGo writes a shell script standing in for the go command: it checks
// that it was asked to download mod and prints what `go mod download -json`
// prints, pointing at zip and dir.
func fakeGo(t *testing.T, mod, zip, dir string, exit int) string {
	t.Helper()
	script := fmt.Sprintf(`#!/bin/sh
[ "$1 $2 $3 $4" = "mod download -json %s" ] || { echo "unexpected args: $*" >&2; exit 3; }
[ "$GOFLAGS" = "-mod=mod" ] || { echo "GOFLAGS=$GOFLAGS" >&2; exit 4; }
echo '{"Path":"golang.org/toolchain","Zip":"%s","Dir":"%s"}'
exit %d
`, mod, zip, dir, exit)
	p := filepath.Join(t.TempDir(), "go")
	require.NoError(t, os.WriteFile(p, []byte(script), 0o755))
	return p
}

func TestResolveGoZip(t *testing.T) {
	dir := t.TempDir()
	zip := filepath.Join(dir, "toolchain.zip")
	content := []byte("not really a zip, but bytes with a known hash")
	require.NoError(t, os.WriteFile(zip, content, 0o644))
	sum := sha256.Sum256(content)
	g := GoToolchain{Version: "1.26.8", OS: "linux", Arch: "amd64", ZipSHA256: hex.EncodeToString(sum[:])}
	ctx := context.Background()

	got, err := ResolveGoZip(ctx, fakeGo(t, g.Module(), zip, dir, 0), g)
	require.NoError(t, err)
	assert.Equal(t, zip, got)

	bad := g
	bad.ZipSHA256 = hex.EncodeToString(make([]byte, 32))
	_, err = ResolveGoZip(ctx, fakeGo(t, g.Module(), zip, dir, 0), bad)
	assert.ErrorContains(t, err, "pinned 0000")

	_, err = ResolveGoZip(ctx, fakeGo(t, g.Module(), zip, dir, 1), g)
	assert.ErrorContains(t, err, "download "+g.Module())

	_, err = ResolveGoZip(ctx, fakeGo(t, g.Module(), filepath.Join(dir, "missing.zip"), dir, 0), g)
	assert.Error(t, err)

	_, err = ResolveGoZip(ctx, fakeGo(t, "other", zip, dir, 0), g)
	assert.ErrorContains(t, err, "unexpected args")
}

func TestGoToolchainValidate(t *testing.T) {
	ok := GoToolchain{Version: "1.26.8", OS: "linux", Arch: "amd64", ZipSHA256: goZipSHA256["golang.org/toolchain@v0.0.1-go1.26.8.linux-amd64"]}
	require.NoError(t, ok.Validate())
	for name, mutate := range map[string]func(*GoToolchain){
		"version":  func(g *GoToolchain) { g.Version = "go1.26.8" },
		"os":       func(g *GoToolchain) { g.OS = "" },
		"checksum": func(g *GoToolchain) { g.ZipSHA256 = "xyz" },
	} {
		g := ok
		mutate(&g)
		assert.Error(t, g.Validate(), name)
	}
}
