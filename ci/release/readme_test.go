package release

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/ci/oci/ocitest"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// readmeImageBlock returns the README's ```sh block that follows the
// paragraph naming TestReadmeImageBlockRuns.
func readmeImageBlock(t *testing.T) string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	defer f.Close() // read only
	var block []string
	named, in := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.Contains(line, "TestReadmeImageBlockRuns"):
			named = true
		case named && !in && line == "```sh":
			in = true
		case in && line == "```":
			return strings.Join(block, "\n") + "\n"
		case in:
			block = append(block, line)
		}
	}
	require.NoError(t, sc.Err())
	t.Fatal("README.md: no ```sh block after the paragraph naming TestReadmeImageBlockRuns")
	return ""
}

func TestReadmeImageBlockIsThere(t *testing.T) {
	b := readmeImageBlock(t)
	for _, want := range []string{"podman run -d --name cuzk", "bin/cuzk prove", "podman rm -f cuzk", "podman volume rm cuzk-keys"} {
		assert.Contains(t, b, want)
	}
	assert.NotContains(t, b, "go run ", "the block uses the release's client, not the source tree")
	out, err := exec.Command("bash", "-n", "-c", b).CombinedOutput()
	assert.NoError(t, err, "bash reads the block: %s", out)
}

// TestReadmeImageBlockRuns runs the README's image block verbatim with
// bash -e in a directory whose dist/ is a real release of this tree: it
// serves, proves twice from the host with the release's client (which
// verifies each proof), and cleans up, leaving no container and no volume.
// It skips visibly without podman or kernels, with -short, and where a
// container or volume of the block's names, or its ports, are taken: it
// never touches what it did not make.
func TestReadmeImageBlockRuns(t *testing.T) {
	block := readmeImageBlock(t)
	ctx := context.Background()
	if err := ocitest.Available(ctx); err != nil {
		t.Skipf("podman is needed to run the README's image block (CI installs it in .ci/run): %v", err)
	}
	repo := needRealRelease(t)
	for _, c := range [][]string{{"container", "exists", "cuzk"}, {"volume", "exists", "cuzk-keys"}} {
		if exec.Command("podman", c...).Run() == nil {
			t.Skipf("podman %s %s: it exists already; the block would replace it", c[0], c[2])
		}
	}
	for _, port := range []string{"9820", "9821"} {
		l, err := net.Listen("tcp", "127.0.0.1:"+port)
		if err != nil {
			t.Skipf("127.0.0.1:%s is taken (%v): the block publishes the daemon there", port, err)
		}
		require.NoError(t, l.Close())
	}
	t.Cleanup(func() { // the block's own clean-up failed if these find anything
		_ = exec.Command("podman", "rm", "-f", "cuzk").Run()
		_ = exec.Command("podman", "volume", "rm", "-f", "cuzk-keys").Run()
	})
	pins, err := toolchain.Load(nil)
	require.NoError(t, err)
	d, err := Run(ctx, RunOptions{Root: repo, OutDir: filepath.Join(t.TempDir(), "dist"), Pins: pins,
		Environ: append(testEnv(), "SOURCE_DATE_EPOCH=1750000000", "RELEASE_VERSION=v0.0.0-readme")})
	require.NoError(t, err)
	work := t.TempDir()
	require.NoError(t, os.Symlink(d.Dir, filepath.Join(work, "dist")))

	cctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, "bash", "-e", "-o", "pipefail", "-c", block)
	cmd.Dir = work
	out, err := cmd.CombinedOutput()
	t.Logf("the block's output:\n%s", out)
	require.NoError(t, err, "the README's block fails as it stands")
	assert.FileExists(t, filepath.Join(work, "bin", "cuzk"), "the release's client")
	assert.Error(t, exec.Command("podman", "container", "exists", "cuzk").Run(), "the block removes its container")
	assert.Error(t, exec.Command("podman", "volume", "exists", "cuzk-keys").Run(), "the block removes its volume")
}

// needRealRelease returns the repository root, skipping visibly where a
// real release of it cannot be built here: no daemon yet, kernels not
// materialized, or -short.
func needRealRelease(t *testing.T) string {
	t.Helper()
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	if len(Packages(repo)) == 0 {
		t.Skipf("no daemon main package yet (looked for %v under %s)", DefaultPackages, repo)
	}
	if _, err := os.Stat(KernelManifestPath(repo)); err != nil {
		t.Skipf("kernels not materialized (%v): `go run mage.go test` builds them first", err)
	}
	if testing.Short() {
		t.Skip("-short: the real release builds the daemon")
	}
	return repo
}
