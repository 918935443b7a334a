package release

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/ci/podman"
	"github.com/cuzk-dev/cuzk/cuda"
)

// daemonImage loads d's image into podman for the test; it skips visibly
// where podman is absent.
func daemonImage(t *testing.T, d Dist) string {
	t.Helper()
	ctx := context.Background()
	if err := podman.Available(ctx); err != nil {
		t.Skipf("podman is needed to run the image (CI installs it in .ci/run): %v", err)
	}
	tag := "localhost/cuzk-release-test:" + d.Image.Digest.Hex[:12]
	require.NoError(t, podman.Load(ctx, filepath.Join(d.Dir, ImageDir), tag))
	t.Cleanup(func() { assert.NoError(t, podman.Remove(context.Background(), tag)) })
	return tag
}

// daemon runs the image's entrypoint (cuzk-daemon) with args.
func daemon(t *testing.T, image string, args ...string) podman.Result {
	t.Helper()
	r, err := podman.Run(context.Background(), podman.Spec{Image: image, Args: args})
	require.NoError(t, err)
	return r
}

func checkImageInPodman(t *testing.T, d Dist, v Verified) {
	image := daemonImage(t, d)

	t.Run("version prints the bundle's kernel manifest", func(t *testing.T) {
		r := daemon(t, image, "version", "-json")
		require.Equal(t, 0, r.ExitCode, "%s", r.Stderr)
		var info struct {
			Manifest *cuda.Manifest `json:"manifest"`
		}
		require.NoError(t, json.Unmarshal(r.Stdout, &info), "%s", r.Stdout)
		require.NotNil(t, info.Manifest)
		assert.Equal(t, v.Manifest, *info.Manifest)

		r = daemon(t, image, "version")
		require.Equal(t, 0, r.ExitCode, "%s", r.Stderr)
		assert.Contains(t, string(r.Stdout), "nvcc build "+v.Manifest.NvccBuild)
	})

	t.Run("selftest reports no GPU, not a loader error", func(t *testing.T) {
		r := daemon(t, image, "selftest", "-n", "16")
		assert.Equal(t, 3, r.ExitCode, "stdout %s\nstderr %s", r.Stdout, r.Stderr)
		assert.Contains(t, string(r.Stderr), "selftest: no GPU on this machine")
		assert.NotContains(t, string(r.Stderr), "exec /usr/local/bin")
	})

	t.Run("non-root with a read-only root filesystem", func(t *testing.T) {
		probe, err := podman.BuildProbe(context.Background(), t.TempDir())
		require.NoError(t, err)
		vol := podman.Volume{Host: filepath.Dir(probe), Container: "/probe", ReadOnly: true}
		run := func(args ...string) podman.Result {
			r, err := podman.Run(context.Background(), podman.Spec{Image: image, Entrypoint: "/probe/probe", Args: args,
				Volumes: []podman.Volume{vol}})
			require.NoError(t, err)
			return r
		}
		r := run("id")
		assert.Equal(t, "uid=65532 gid=65532\n", string(r.Stdout), "%s", r.Stderr)
		r = run("write", "/usr/local/bin/x")
		assert.Equal(t, 1, r.ExitCode)
		assert.Contains(t, strings.ToLower(string(r.Stderr)), "read-only file system")
		r = run("write", "/tmp/x")
		assert.Equal(t, 0, r.ExitCode, "/tmp is writable scratch: %s", r.Stderr)
	})
}
