package release

import (
	"context"
	"encoding/json"
	"github.com/cuzk-dev/cuzk/cuda/manifest"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cuzk-dev/cuzk/ci/oci/ocitest"
	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/client"
	"github.com/cuzk-dev/cuzk/internal/buildinfo"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
)

// daemonImage loads d's image into podman for the test; it skips visibly
// where podman is absent.
func daemonImage(t *testing.T, d Dist) string {
	t.Helper()
	ctx := context.Background()
	if err := ocitest.Available(ctx); err != nil {
		t.Skipf("podman is needed to run the image (CI installs it in .ci/run): %v", err)
	}
	tag := "localhost/cuzk-release-test:" + d.Image.Digest.Hex[:12]
	require.NoError(t, ocitest.Load(ctx, filepath.Join(d.Dir, ImageDir), tag))
	t.Cleanup(func() { assert.NoError(t, ocitest.Remove(context.Background(), tag)) })
	return tag
}

// daemon runs the image's entrypoint (cuzk-daemon) with args.
func daemon(t *testing.T, image string, args ...string) ocitest.Result {
	t.Helper()
	r, err := ocitest.Run(context.Background(), ocitest.Spec{Image: image, Args: args})
	require.NoError(t, err)
	return r
}

func checkImageInPodman(t *testing.T, d Dist, v Verified) {
	image := daemonImage(t, d)

	t.Run("version prints the release's version, commit and kernel manifest", func(t *testing.T) {
		r := daemon(t, image, "version", "-json")
		require.Equal(t, 0, r.ExitCode, "%s", r.Stderr)
		var info struct {
			buildinfo.Info
			Manifest *manifest.Manifest `json:"manifest"`
		}
		require.NoError(t, json.Unmarshal(r.Stdout, &info), "%s", r.Stdout)
		require.NotNil(t, info.Manifest)
		assert.Equal(t, v.Manifest, *info.Manifest)
		assert.Equal(t, v.Version, info.Version, "the provenance's version")
		assert.Equal(t, v.Commit, info.Commit, "the provenance's commit")
		assert.Equal(t, buildinfo.FromStamp, info.From)

		r = daemon(t, image, "version")
		require.Equal(t, 0, r.ExitCode, "%s", r.Stderr)
		assert.Contains(t, string(r.Stdout), "cuzk-daemon "+v.Version+"\n  commit: "+v.Commit)
		assert.Contains(t, string(r.Stdout), "nvcc build "+v.Manifest.NvccBuild)

		for _, bin := range []string{"cuzk", "cuzk-bench"} {
			r, err := ocitest.Run(context.Background(), ocitest.Spec{Image: image, Entrypoint: ImageBinDir + "/" + bin, Args: []string{"version", "-json"}})
			require.NoError(t, err)
			require.Equal(t, 0, r.ExitCode, "%s: %s", bin, r.Stderr)
			var got buildinfo.Info
			require.NoError(t, json.Unmarshal(r.Stdout, &got), "%s", r.Stdout)
			assert.Equal(t, v.Version, got.Version, "%s version", bin)
			assert.Equal(t, v.Commit, got.Commit, "%s version", bin)
		}
	})

	t.Run("selftest reports no GPU, not a loader error", func(t *testing.T) {
		r := daemon(t, image, "selftest", "-n", "16")
		assert.Equal(t, 3, r.ExitCode, "stdout %s\nstderr %s", r.Stdout, r.Stderr)
		assert.Contains(t, string(r.Stderr), "selftest: no GPU on this machine")
		assert.NotContains(t, string(r.Stderr), "exec /usr/local/bin")
	})

	t.Run("non-root with a read-only root filesystem", func(t *testing.T) {
		probe, err := ocitest.BuildProbe(context.Background(), t.TempDir())
		require.NoError(t, err)
		vol := ocitest.Volume{Host: filepath.Dir(probe), Container: "/probe", ReadOnly: true}
		run := func(args ...string) ocitest.Result {
			r, err := ocitest.Run(context.Background(), ocitest.Spec{Image: image, Entrypoint: "/probe/probe", Args: args,
				Volumes: []ocitest.Volume{vol}})
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
		r = run("write", ImageKeyDir+"/x")
		assert.Equal(t, 0, r.ExitCode, "the key volume is writable by the image's user: %s", r.Stderr)
	})

	t.Run("serve without a token refuses and says how to pass one", func(t *testing.T) {
		r := daemon(t, image) // no arguments: the default command, serve
		assert.Equal(t, 1, r.ExitCode, "stdout %s\nstderr %s", r.Stdout, r.Stderr)
		assert.Contains(t, string(r.Stderr), "needs a bearer token")
		assert.Contains(t, string(r.Stderr), "CUZK_DAEMON_TOKEN_FILE")
	})

	t.Run("serve proves over gRPC from the host", func(t *testing.T) {
		checkServeInContainer(t, image, v)
	})
}

// checkServeInContainer runs the image with no arguments (its default
// command, serve: all interfaces, the key volume, backend auto, which
// finds no GPU in the container) and only a token file mounted, with both
// ports published on 127.0.0.1; /readyz answers a probe without the
// token, /metrics names the release, and porep-synth proofs are proved
// and verified from the host over gRPC, as the client cuzk prove -addr does.
func checkServeInContainer(t *testing.T, image string, v Verified) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const token = "container-test-token"
	secrets := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(secrets, "token"), []byte(token+"\n"), 0o644))
	require.NoError(t, os.Chmod(secrets, 0o755)) // the image's user (65532) reads it
	c, err := ocitest.Start(ctx, ocitest.Spec{Image: image, Ports: []int{ImageGRPCPort, ImageHTTPPort},
		Env:     []string{"CUZK_DAEMON_TOKEN_FILE=/run/cuzk/token"},
		Volumes: []ocitest.Volume{{Host: secrets, Container: "/run/cuzk", ReadOnly: true}}})
	require.NoError(t, err)
	defer func() {
		if t.Failed() {
			logs, _ := c.Logs(context.Background())
			t.Logf("container log:\n%s", logs)
		}
		assert.NoError(t, c.Stop(context.Background()))
	}()
	cl, err := client.Dial([]string{c.Addr(ImageGRPCPort)}, client.Config{Token: token})
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

	httpBase := "http://" + c.Addr(ImageHTTPPort)
	code, body := httpGet(t, httpBase+"/readyz", "")
	assert.Equal(t, http.StatusOK, code, "a readiness probe needs no token")
	assert.Equal(t, "ready: backend cpu\n", body)
	code, _ = httpGet(t, httpBase+"/metrics", "")
	assert.Equal(t, http.StatusUnauthorized, code, "/metrics asks for the token")
	code, body = httpGet(t, httpBase+"/metrics", token)
	assert.Equal(t, http.StatusOK, code)
	assert.Regexp(t, `cuzk_build_info\{commit="`+v.Commit+`",go="go[0-9.]+",version="`+regexp.QuoteMeta(v.Version)+`"\} 1`, body)
	assert.Contains(t, st.GetVersion(), v.Version+" commit "+v.Commit, "GetStatus names the release")

	bad, err := client.Dial([]string{c.Addr(ImageGRPCPort)}, client.Config{Token: "wrong"})
	require.NoError(t, err)
	defer bad.Close()
	_, err = bad.GetStatus(ctx, &pb.GetStatusRequest{})
	assert.Equal(t, codes.Unauthenticated, status.Code(err))
}

// httpGet returns the status and body of GET url, with the bearer token
// when one is given.
func httpGet(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}
