package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/client"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// daemonBinary builds cuzk-daemon once per test run.
func daemonBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cuzk-daemon-test-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "cuzk-daemon")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("go build: %s", out)
		}
	})
	require.NoError(t, buildErr)
	return binPath
}

// proc is a running daemon binary with its log.
type proc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  strings.Builder
	sock string
	http string
	done chan error
}

var httpAddr = regexp.MustCompile(`http=(127\.0\.0\.1:\d+)`)

func startDaemon(t *testing.T, dir string, extra ...string) *proc {
	t.Helper()
	p := &proc{sock: filepath.Join(dir, "cuzk.sock"), done: make(chan error, 1)}
	args := append([]string{"serve", "-listen", "unix:" + p.sock, "-http-listen", "127.0.0.1:0",
		"-key-dir", filepath.Join(dir, "keys"), "-backend", "cpu", "-synthesizers", "1"}, extra...)
	p.cmd = exec.Command(daemonBinary(t), args...)
	stderr, err := p.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.log.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if m := httpAddr.FindStringSubmatch(sc.Text()); m != nil && strings.Contains(sc.Text(), "serving") {
				ready <- m[1]
			}
		}
	}()
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill() // the test may have ended it already
		<-p.done
		if t.Failed() {
			t.Logf("daemon log:\n%s", p.logText())
		}
	})
	select {
	case p.http = <-ready:
	case err := <-p.done:
		t.Fatalf("daemon exited before serving: %v\n%s", err, p.logText())
	case <-time.After(time.Minute):
		t.Fatalf("daemon not serving after a minute:\n%s", p.logText())
	}
	return p
}

func (p *proc) logText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

func (p *proc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		t.Fatal("daemon did not exit")
	}
	p.done <- nil // for the cleanup
	return p.cmd.ProcessState.ExitCode()
}

func porepReq(constraints, seed uint64) *pb.ProofRequest {
	return &pb.ProofRequest{Circuit: &pb.Circuit{Id: "porep-synth", Params: map[string]uint64{"constraints": constraints}},
		Input: binary.LittleEndian.AppendUint64(nil, seed)}
}

func dialDaemon(t *testing.T, p *proc) *client.Client {
	c, err := client.Dial([]string{"unix:" + p.sock}, client.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestServeBinaryProvesAndDrainsOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP (visible): builds and runs the daemon binary; not in -short")
	}
	p := startDaemon(t, t.TempDir())
	c := dialDaemon(t, p)
	ctx := testCtx(t)
	res, err := c.Prove(ctx, porepReq(1024, 1))
	require.NoError(t, err)
	assert.True(t, res.GetVerified())
	assertVerifies(t, c, res, 1024)

	for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ready: backend cpu", "/metrics": "cuzk_jobs_total"} {
		resp, err := http.Get("http://" + p.http + path)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.Contains(t, string(b), want, path)
	}

	// A job big enough to be running when SIGTERM comes: drain lets it finish.
	sub, err := c.SubmitProof(ctx, porepReq(1<<14, 2))
	require.NoError(t, err)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	// Not the signal's own line ("signal: draining"), logged before the
	// daemon refuses anything: the one that says it does.
	require.Eventually(t, func() bool { return strings.Contains(p.logText(), "new jobs are refused") }, time.Minute, 5*time.Millisecond)
	_, err = c.SubmitProof(ctx, porepReq(1024, 3))
	assert.Equal(t, codes.Unavailable, status.Code(err), "new jobs are refused while draining: %v", err)
	res, err = c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: sub.GetJobId()})
	require.NoError(t, err, "the running job finishes")
	assert.True(t, res.GetVerified())
	assert.Equal(t, 0, p.wait(t), "a drained daemon exits 0")
	assert.Contains(t, p.logText(), "CUZK_TIMING")
	_, err = os.Stat(p.sock)
	assert.ErrorIs(t, err, os.ErrNotExist, "the socket is removed")
}

func TestServeBinaryKill9AndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP (visible): builds and runs the daemon binary; not in -short")
	}
	dir := t.TempDir()
	p := startDaemon(t, dir)
	c := dialDaemon(t, p)
	ctx := testCtx(t)
	// Kill while a development key for a new shape is being generated and written.
	_, err := c.SubmitProof(ctx, porepReq(1<<15, 1))
	require.NoError(t, err)
	require.Eventually(t, func() bool { // the key's files are being written (or just were)
		ents, _ := os.ReadDir(filepath.Join(dir, "keys")) // not there yet: keep looking
		for _, e := range ents {
			if n := e.Name(); strings.Contains(n, ".tmp") || strings.HasSuffix(n, ".pk") || strings.HasSuffix(n, ".rawpk") {
				return true
			}
		}
		return false
	}, 2*time.Minute, time.Millisecond)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	p.wait(t)

	q := startDaemon(t, dir) // the stale socket file is replaced
	c2 := dialDaemon(t, q)
	res, err := c2.Prove(ctx, porepReq(1<<15, 1))
	require.NoError(t, err, "after kill -9 the key directory still serves")
	assertVerifies(t, c2, res, 1<<15)
	ents, err := os.ReadDir(filepath.Join(dir, "keys"))
	require.NoError(t, err)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".pk") || strings.HasSuffix(e.Name(), ".vk") {
			assert.False(t, strings.HasPrefix(e.Name(), "."), "only whole files carry key names: %s", e.Name())
		}
		assert.NotContains(t, e.Name(), ".tmp", "the restart removed the interrupted write's temporary files")
	}
}

func assertVerifies(t *testing.T, c *client.Client, res *pb.ProofResult, constraints uint64) {
	t.Helper()
	circ := &pb.Circuit{Id: "porep-synth", Params: map[string]uint64{"constraints": constraints}}
	vkr, err := c.GetVerifyingKey(testCtx(t), &pb.KeyRequest{Circuit: circ})
	require.NoError(t, err)
	var vk groth16.VerifyingKey
	_, err = vk.ReadFrom(strings.NewReader(string(vkr.GetBinary())))
	require.NoError(t, err)
	r, err := registry.Default().Resolve(circ.Id, circ.Params)
	require.NoError(t, err)
	_ = r
	require.NoError(t, client.VerifyResult(&vk, res, nil))
}

// TestServeBinarySecondSignalExits143: a second SIGTERM during the drain
// cancels the running job, and the exit status says so (128 + 15).
func TestServeBinarySecondSignalExits143(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP (visible): builds and runs the daemon binary; not in -short")
	}
	p := startDaemon(t, t.TempDir())
	c := dialDaemon(t, p)
	ctx := testCtx(t)
	sub, err := c.SubmitProof(ctx, porepReq(1<<16, 1)) // a key to set up and a proof: seconds
	require.NoError(t, err)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	// Not the signal's own line ("signal: draining"), logged before the
	// daemon refuses anything: the one that says it does.
	require.Eventually(t, func() bool { return strings.Contains(p.logText(), "new jobs are refused") }, time.Minute, 5*time.Millisecond)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	_, err = c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: sub.GetJobId()})
	assert.Error(t, err, "the running job was cancelled")
	assert.Equal(t, 143, p.wait(t), "a second SIGTERM that cancelled jobs: 128+15")
	assert.Contains(t, p.logText(), "second signal")
}
