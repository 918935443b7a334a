package release

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/internal/buildinfo"
)

// TestWorkStamp: a development build names HEAD's commit, and says when
// the tree differs from it; a binary built with the stamp's ldflag under
// -buildvcs=false (where the build info has no vcs.revision) carries it.
func TestWorkStamp(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ctx := context.Background()
	dir := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.TrimSpace(string(out))
	}
	s, err := WorkStamp(ctx, dir, nil)
	require.NoError(t, err)
	assert.Equal(t, buildinfo.Stamp{Version: "dev"}, s, "outside git: no commit")

	git("init", "-q")
	copyTree(t, filepath.Join("testdata", "hello"), dir)
	git("add", ".")
	git("commit", "-q", "-m", "hello")
	head := git("rev-parse", "HEAD")
	s, err = WorkStamp(ctx, dir, nil)
	require.NoError(t, err)
	assert.Equal(t, buildinfo.Stamp{Version: "dev", Commit: head}, s)
	s, err = WorkStamp(ctx, dir, []string{EnvVersion + "=v1.2.3"})
	require.NoError(t, err)
	assert.Equal(t, "v1.2.3", s.Version)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "LICENSE"), []byte("changed\n"), 0o644))
	s, err = WorkStamp(ctx, dir, nil)
	require.NoError(t, err)
	assert.Equal(t, buildinfo.Stamp{Version: "dev+modified", Commit: head}, s)

	// cuzk built as `build` builds it, where GOFLAGS=-buildvcs=false leaves
	// the build info without vcs.revision: its version names the stamp.
	ldflag, err := s.Ldflag()
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "cuzk")
	build := exec.Command("go", "build", "-ldflags="+ldflag, "-o", bin, "./daemon/cmd/cuzk")
	build.Dir = filepath.Join("..", "..")
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin, "version", "-o", "json").Output()
	require.NoError(t, err)
	var v struct{ Version, Commit, From string }
	require.NoError(t, json.Unmarshal(out, &v), "%s", out)
	assert.Equal(t, buildinfo.Info{Version: s.Version, Commit: s.Commit, From: buildinfo.FromStamp},
		buildinfo.Info{Version: v.Version, Commit: v.Commit, From: v.From}, "%s", out)
}
