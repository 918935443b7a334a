package ocitest

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/ci/oci"
)

func TestArgs(t *testing.T) {
	a := Spec{Image: "oci:/x", Args: []string{"version"}}.args(false)
	s := strings.Join(a, " ")
	for _, want := range []string{"--runtime runc", "--ulimit nofile=1024:1024", "--ulimit nproc=1024:1024", "--read-only",
		"--network none", "--cap-drop all", "--rm"} {
		assert.Contains(t, s, want)
	}
	assert.Equal(t, []string{"oci:/x", "version"}, a[len(a)-2:])
	s = strings.Join(Spec{Image: "i", Ports: []int{50051}, Writable: true, Entrypoint: "/probe/probe", User: "1:1",
		Volumes: []Volume{{Host: "/h", Container: "/c", ReadOnly: true}}}.args(true), " ")
	for _, want := range []string{"-d", "-p 127.0.0.1::50051", "--entrypoint /probe/probe", "--user 1:1", "-v /h:/c:ro"} {
		assert.Contains(t, s, want)
	}
	assert.NotContains(t, s, "--read-only")
	assert.NotContains(t, s, "--network none")
}

// probeImage writes a one-layer image (an empty /etc/passwd and a nonroot
// user) and builds the probe; it skips visibly without podman.
func probeImage(t *testing.T) (image string, probe Volume) {
	t.Helper()
	if err := Available(context.Background()); err != nil {
		t.Skipf("podman is needed for container tests (CI installs it in .ci/run): %v", err)
	}
	img, err := oci.Build(oci.Image{
		Layers: []oci.LayerSpec{{CreatedBy: "test", Entries: []oci.Entry{
			{Path: "/etc/passwd", Kind: oci.KindFile, Mode: 0o644, Data: []byte("root:x:0:0::/:/x\nnonroot:x:65532:65532::/:/x\n")},
			{Path: "/probe", Kind: oci.KindDir, Mode: 0o755},
		}}},
		Entrypoint: []string{"/probe/probe"}, User: "65532:65532", Created: time.Unix(1, 0), OS: "linux", Architecture: "amd64",
	})
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "layout")
	_, err = oci.WriteLayout(dir, img, oci.Image{OS: "linux", Architecture: "amd64"}.Platform(), "test")
	require.NoError(t, err)
	tag := "localhost/cuzk-probe-test:" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	require.NoError(t, Load(context.Background(), dir, tag))
	t.Cleanup(func() { assert.NoError(t, Remove(context.Background(), tag)) })
	bin, err := BuildProbe(context.Background(), t.TempDir())
	require.NoError(t, err)
	return tag, Volume{Host: filepath.Dir(bin), Container: "/probe", ReadOnly: true}
}

func TestRunInPodman(t *testing.T) {
	image, probe := probeImage(t)
	ctx := context.Background()
	r, err := Run(ctx, Spec{Image: image, Args: []string{"id"}, Volumes: []Volume{probe}})
	require.NoError(t, err)
	assert.Equal(t, "uid=65532 gid=65532\n", string(r.Stdout), "%s", r.Stderr)

	r, err = Run(ctx, Spec{Image: image, Args: []string{"exit", "3"}, Volumes: []Volume{probe}})
	require.NoError(t, err)
	assert.Equal(t, 3, r.ExitCode)

	r, err = Run(ctx, Spec{Image: image, Args: []string{"write", "/etc/x"}, Volumes: []Volume{probe}, User: "0:0"})
	require.NoError(t, err)
	assert.Equal(t, 1, r.ExitCode, "read-only root, even for root")
	assert.Contains(t, string(r.Stderr), "read-only file system")

	r, err = Run(ctx, Spec{Image: image, Args: []string{"write", "/etc/x"}, Volumes: []Volume{probe}, User: "0:0", Writable: true})
	require.NoError(t, err)
	assert.Equal(t, 0, r.ExitCode, "%s", r.Stderr)

	_, err = Run(ctx, Spec{Image: "localhost/cuzk-absent:none", Args: []string{"id"}})
	assert.Error(t, err, "podman's own failure is an error, not an exit code")
}

func TestStartPublishesOnLoopback(t *testing.T) {
	image, probe := probeImage(t)
	ctx := context.Background()
	c, err := Start(ctx, Spec{Image: image, Args: []string{"serve", "8080"}, Volumes: []Volume{probe}, Ports: []int{8080}})
	require.NoError(t, err)
	defer func() { assert.NoError(t, c.Stop(ctx)) }()
	addr := c.Addr(8080)
	require.True(t, strings.HasPrefix(addr, "127.0.0.1:"), addr)
	var body []byte
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, err = io.ReadAll(resp.Body)
		return err == nil
	}, 20*time.Second, 100*time.Millisecond)
	assert.Equal(t, "probe", string(body))
	_, err = c.Logs(ctx)
	assert.NoError(t, err)
}

func TestStartWait(t *testing.T) {
	image, probe := probeImage(t)
	ctx := context.Background()
	c, err := Start(ctx, Spec{Image: image, Args: []string{"exit", "3"}, Volumes: []Volume{probe}})
	require.NoError(t, err, "no ports: the network stays off")
	defer func() { assert.NoError(t, c.Stop(ctx)) }()
	// The probe may have exited already: the container stays until Stop,
	// so Wait has its status either way.
	code, err := c.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, code)
	code, err = c.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, code, "asked again after the exit")
}
