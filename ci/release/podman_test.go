package release

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cuzk-dev/cuzk/ci/podman"
	"github.com/cuzk-dev/cuzk/cuda"
	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/client"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
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

	t.Run("serve proves over gRPC from the host", func(t *testing.T) {
		checkServeInContainer(t, image)
	})
}

// checkServeInContainer runs `cuzk-daemon serve` in the image (CPU
// backend, all interfaces inside the container, so a token is required)
// with its port published on 127.0.0.1, and proves and verifies porep-synth
// proofs from the host over gRPC, as cuzk-bench prove -addr does.
func checkServeInContainer(t *testing.T, image string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const token = "container-test-token"
	c, err := podman.Start(ctx, podman.Spec{Image: image, Ports: []int{9820},
		Args: []string{"serve", "-listen", "0.0.0.0:9820", "-http-listen", "", "-backend", "cpu", "-key-dir", "/tmp/keys",
			"-token", token}})
	require.NoError(t, err)
	defer func() {
		if t.Failed() {
			logs, _ := c.Logs(context.Background())
			t.Logf("container log:\n%s", logs)
		}
		assert.NoError(t, c.Stop(context.Background()))
	}()
	cl, err := client.Dial([]string{c.Addr(9820)}, client.Options{Token: token})
	require.NoError(t, err)
	defer cl.Close()
	require.Eventually(t, func() bool {
		_, err := cl.GetStatus(ctx, &pb.GetStatusRequest{})
		return err == nil
	}, time.Minute, 100*time.Millisecond, "the daemon in the container answers")
	st, err := cl.GetStatus(ctx, &pb.GetStatusRequest{})
	require.NoError(t, err)
	assert.Equal(t, "cpu", st.GetBackend())
	assert.NotEmpty(t, st.GetKernels(), "the image's daemon reports its embedded kernels")
	circ, err := registry.Default().Resolve("porep-synth", map[string]uint64{"constraints": 1024})
	require.NoError(t, err)
	rep, err := client.RunLoad(ctx, cl, client.Load{Circuit: circ, N: 2, Concurrency: 2, Seed: 5})
	require.NoError(t, err)
	assert.Empty(t, rep.Failures)
	assert.Len(t, rep.Proofs, 2, "proved in the container and verified on the host")

	bad, err := client.Dial([]string{c.Addr(9820)}, client.Options{Token: "wrong"})
	require.NoError(t, err)
	defer bad.Close()
	_, err = bad.GetStatus(ctx, &pb.GetStatusRequest{})
	assert.Equal(t, codes.Unauthenticated, status.Code(err))
}
