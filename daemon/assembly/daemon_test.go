package assembly

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/client"
	"github.com/cuzk-dev/cuzk/daemon/server"
	"github.com/cuzk-dev/cuzk/internal/stats"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/internal/buildinfo"
)

func startDaemonHTTP(t *testing.T, token string, public bool) (*Daemon, error) {
	dir := t.TempDir()
	o := DefaultConfig()
	o.Listen, o.HTTPListen, o.Backend, o.KeyDir = "unix:"+filepath.Join(dir, "d.sock"), "0.0.0.0:0", "cpu", filepath.Join(dir, "keys")
	o.Token, o.HTTPPublic = token, public
	d, err := Start(o, nil)
	if err == nil {
		t.Cleanup(d.Stop)
	}
	return d, err
}

func get(t *testing.T, url, token string) (int, string) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestHTTPFollowsTheTokenRule: the HTTP endpoints off loopback need the
// token (which they then ask for, the probes' /healthz and /readyz aside)
// or http_public.
func TestHTTPFollowsTheTokenRule(t *testing.T) {
	_, err := startDaemonHTTP(t, "", false)
	require.ErrorIs(t, err, server.ErrExposedWithoutToken)
	assert.Contains(t, err.Error(), "http_listen")
	assert.Contains(t, err.Error(), "http_public")

	d, err := startDaemonHTTP(t, "s3cret", false)
	require.NoError(t, err)
	port := d.HTTPAddr()[strings.LastIndex(d.HTTPAddr(), ":"):]
	base := "http://127.0.0.1" + port
	code, _ := get(t, base+"/metrics", "")
	assert.Equal(t, http.StatusUnauthorized, code, "/metrics without the token")
	code, _ = get(t, base+"/metrics", "wrong")
	assert.Equal(t, http.StatusUnauthorized, code, "/metrics with another token")
	code, body := get(t, base+"/readyz", "")
	assert.Equal(t, http.StatusOK, code, "readiness probes reach /readyz without credentials (a kubelet cannot send a Secret)")
	assert.Equal(t, "ready: backend cpu\n", body)
	code, body = get(t, base+"/metrics", "s3cret")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "cuzk_queue_depth")
	info := buildinfo.Get()
	assert.Contains(t, body, `cuzk_build_info{commit="`+info.Commit+`",go="`+info.Go+`",version="`+info.Version+`"} 1`)
	code, _ = get(t, base+"/healthz", "")
	assert.Equal(t, http.StatusOK, code, "probes reach /healthz without credentials")

	p, err := startDaemonHTTP(t, "", true)
	require.NoError(t, err)
	code, body = get(t, "http://127.0.0.1"+p.HTTPAddr()[strings.LastIndex(p.HTTPAddr(), ":"):]+"/metrics", "")
	assert.Equal(t, http.StatusOK, code, "http_public serves anyone")
	assert.Contains(t, body, "cuzk_queue_depth")
}

// TestStatusReportsBuildInfo: GetStatus names this binary's version,
// commit and Go release.
func TestStatusReportsBuildInfo(t *testing.T) {
	d, err := startDaemonHTTP(t, "s3cret", false)
	require.NoError(t, err)
	c, err := client.Dial([]string{d.Addr()}, client.Config{Token: "s3cret"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := c.GetStatus(ctx, &pb.GetStatusRequest{})
	require.NoError(t, err)
	info := buildinfo.Get()
	assert.Equal(t, info.String(), st.GetVersion())
	assert.Contains(t, st.GetVersion(), info.Go)
	assert.NotContains(t, st.GetVersion(), "(devel)", "the module's placeholder version is not reported")
}

// TestBudgetAboveTheMachineIsAWarning: a host budget beyond the machine's
// memory starts (a machine may grow), with a warning naming the key.
func TestBudgetAboveTheMachineIsAWarning(t *testing.T) {
	m, err := ReadMachine(os.DirFS("/"))
	require.NoError(t, err)
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	dir := t.TempDir()
	o := DefaultConfig()
	o.Listen, o.HTTPListen, o.Backend, o.KeyDir = "unix:"+filepath.Join(dir, "d.sock"), "", "cpu", filepath.Join(dir, "keys")
	o.HostBudget, o.MemoryLimit = stats.Bytes(m.Bytes+64<<30), stats.Bytes(prev)
	var logb syncBuffer
	d, err := Start(o, slog.New(slog.NewTextHandler(&logb, nil)))
	require.NoError(t, err)
	d.Stop()
	assert.Regexp(t, `level=WARN msg="host_budget: \d+ bytes \([0-9.]+ GiB\) is above the machine's memory`, logb.String())
	assert.Regexp(t, `level=WARN msg="host_key_budget: \d+ bytes .* is above the machine's memory`, logb.String(),
		"the key budget left unset is the host budget: named too")
}

// A daemon proving on the CPU says which GPU-only settings it was given
// take no effect, and names none it was not given.
func TestGPUSettingsOnTheCPUAreAWarning(t *testing.T) {
	dir := t.TempDir()
	o := DefaultConfig()
	o.Listen, o.HTTPListen, o.Backend, o.KeyDir = "unix:"+filepath.Join(dir, "d.sock"), "", "cpu", filepath.Join(dir, "keys")
	o.GPUMemoryLimit, o.GPUBatch = stats.Bytes(24<<30), 2
	var logb syncBuffer
	d, err := Start(o, slog.New(slog.NewTextHandler(&logb, nil)))
	require.NoError(t, err)
	d.Stop()
	assert.Contains(t, logb.String(), `level=WARN msg="gpu_memory_limit is set but has no effect: no GPU proves here"`)
	assert.Contains(t, logb.String(), `level=WARN msg="gpu_batch is set but has no effect: no GPU proves here"`)
	assert.NotContains(t, logb.String(), "gpu_key_budget is set", "left at its default")
	assert.Empty(t, gpuSettings(DefaultConfig()), "the defaults set none")
}

// syncBuffer is a bytes.Buffer a logger writes from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCheckNamesKeyAndValue: each refusal of Check names its key and value.
func TestCheckNamesKeyAndValue(t *testing.T) {
	o := DefaultConfig()
	require.NoError(t, o.Check())
	o.MaxMessageBytes, o.DrainTimeout, o.HostJobBudget, o.GPUs, o.Backend = 64<<10+1, -time.Second, -1, []int{-2}, "tpu"
	o.GPUMemoryLimit, o.GPUBatch = 1<<20, -2
	err := o.Check()
	require.Error(t, err)
	for _, want := range []string{"max_message_bytes: 65537 bytes (64.0 KiB): below the floor of 1.0 MiB", "drain_timeout: -1s",
		"host_job_budget: -1: negative", "gpus: -2", `backend: "tpu"`, "gpu_memory_limit: 1048576 bytes (1.0 MiB): below the floor of 256",
		"gpu_batch: -2: negative"} {
		assert.Contains(t, err.Error(), want)
	}
	_, err = Start(o, nil)
	assert.ErrorContains(t, err, "max_message_bytes", "Start checks too")
}

// TestDocsNameTheOpenHTTPPaths: docs/daemon.md names exactly the HTTP
// paths a daemon with a token serves without it.
func TestDocsNameTheOpenHTTPPaths(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "daemon.md"))
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)on every path but (.*?), which probes").FindSubmatch(doc)
	require.NotNil(t, m, "docs/daemon.md says which HTTP paths need no token")
	documented := map[string]bool{}
	for _, p := range regexp.MustCompile("`(/[a-z]+)`").FindAllSubmatch(m[1], -1) {
		documented[string(p[1])] = true
	}
	d, err := startDaemonHTTP(t, "s3cret", false)
	require.NoError(t, err)
	base := "http://127.0.0.1" + d.HTTPAddr()[strings.LastIndex(d.HTTPAddr(), ":"):]
	open := map[string]bool{}
	for _, p := range []string{"/metrics", "/healthz", "/readyz"} {
		if code, _ := get(t, base+p, ""); code != http.StatusUnauthorized {
			open[p] = true
		}
	}
	assert.Equal(t, open, documented, "the paths served without the token, against docs/daemon.md")
}
