package ci

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

// GoToolchain is a Go release taken from the golang.org/toolchain module:
// the archives the go command itself fetches for GOTOOLCHAIN=goX.Y.Z, served
// by the Go module proxy and recorded in the checksum database. It is pinned
// by the sha256 of the module zip.
type GoToolchain struct {
	Version   string // "1.26.8"
	OS, Arch  string // "linux", "amd64"
	ZipSHA256 string // hex sha256 of the module zip
}

// goZipSHA256 pins golang.org/toolchain module zips by sha256, keyed by
// module@version. The values are the sha256 of the zips proxy.golang.org
// serves (fetched with `go mod download -json`, which checks them against
// sum.golang.org: h1:ZOmGe1OnfREDMIdb1Qi4G9JSuDPBLGExZMQ4nis1RXM= for
// go1.26.8.linux-amd64). Add a line here when toolchain.yaml's go changes;
// a test fails until then.
var goZipSHA256 = map[string]string{
	"golang.org/toolchain@v0.0.1-go1.26.8.linux-amd64": "30c2b1bf7dcc88d3eb0a1364e47ddd9128edb3110a30e8a0ef61cd5856b31de7",
}

var goVersionRE = regexp.MustCompile(`^1\.\d+(\.\d+)?((rc|beta)\d+)?$`)

// PinnedGo returns the pinned toolchain for a Go version ("1.26.8") and a
// platform ("linux/amd64"); an unpinned combination is an error naming the
// table to extend.
func PinnedGo(version, platform string) (GoToolchain, error) {
	goos, arch, ok := strings.Cut(platform, "/")
	if !ok {
		return GoToolchain{}, fmt.Errorf("go toolchain: platform %q is not os/arch", platform)
	}
	g := GoToolchain{Version: version, OS: goos, Arch: arch}
	sum, ok := goZipSHA256[g.Module()]
	if !ok {
		return GoToolchain{}, fmt.Errorf("go toolchain: no pinned checksum for %s (add it to goZipSHA256 in ci/gotoolchain.go)", g.Module())
	}
	g.ZipSHA256 = sum
	return g, g.Validate()
}

// Module returns the module@version that holds this toolchain.
func (g GoToolchain) Module() string {
	return "golang.org/toolchain@v0.0.1-go" + g.Version + "." + g.OS + "-" + g.Arch
}

// GOVERSION returns what `go env GOVERSION` prints for this toolchain.
func (g GoToolchain) GOVERSION() string { return "go" + g.Version }

// Validate checks the fields' shapes.
func (g GoToolchain) Validate() error {
	if !goVersionRE.MatchString(g.Version) {
		return fmt.Errorf("go toolchain: version %q is not like 1.26.8", g.Version)
	}
	if g.OS == "" || g.Arch == "" {
		return fmt.Errorf("go toolchain %s: OS and Arch are required", g.Version)
	}
	if b, err := hex.DecodeString(g.ZipSHA256); err != nil || len(b) != sha256.Size {
		return fmt.Errorf("go toolchain %s: zip sha256 %q is not 64 hex digits", g.Module(), g.ZipSHA256)
	}
	return nil
}

// ResolveGoZip makes the toolchain's module zip available on the host and
// returns its path: `go mod download -json` fetches it (checking it against
// the Go checksum database), and its sha256 must equal the pin. goCmd is the
// host's go command. The build image's Go layer is made from the zip.
func ResolveGoZip(ctx context.Context, goCmd string, g GoToolchain) (string, error) {
	if err := g.Validate(); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, goCmd, "mod", "download", "-json", g.Module())
	// Outside any module, so the download cannot touch a go.mod or go.sum.
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOFLAGS=-mod=mod", "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("download %s: %w\n%s%s", g.Module(), err, out, stderr.Bytes())
	}
	var info struct{ Zip, Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", fmt.Errorf("download %s: decode go mod download output: %w", g.Module(), err)
	}
	if info.Error != "" || info.Zip == "" || info.Dir == "" {
		return "", fmt.Errorf("download %s: %s", g.Module(), strings.TrimSpace(info.Error+" (no zip or dir reported)"))
	}
	if err := checkSHA256(info.Zip, g.ZipSHA256); err != nil {
		return "", fmt.Errorf("download %s: %w", g.Module(), err)
	}
	return info.Zip, nil
}

func checkSHA256(path, want string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("hash %s: %w", path, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%s: sha256 %s, pinned %s", path, got, want)
	}
	return nil
}
