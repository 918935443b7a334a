package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
)

// fakeDaemon drains until stopped or its context ends.
type fakeDaemon struct {
	errs    chan error
	stopped chan struct{}
	once    sync.Once
	drains  int
}

func newFake() *fakeDaemon {
	return &fakeDaemon{errs: make(chan error, 1), stopped: make(chan struct{})}
}

func (f *fakeDaemon) Errors() <-chan error { return f.errs }
func (f *fakeDaemon) Stop()                { f.once.Do(func() { close(f.stopped) }) }
func (f *fakeDaemon) Drain(ctx context.Context) error {
	f.drains++
	select {
	case <-f.stopped:
		return errors.New("stopped")
	case <-ctx.Done():
		f.Stop()
		return ctx.Err()
	}
}

func (f *fakeDaemon) isStopped() bool {
	select {
	case <-f.stopped:
		return true
	default:
		return false
	}
}

// TestSignalsAreNeverLost: two signals sent at once (both waiting in the
// channel before the first is read) are a drain and a cancel; SIGHUP is
// logged and ignored before and during a drain; a drain that times out
// and a listener that fails both stop the daemon and say so.
func TestSignalsAreNeverLost(t *testing.T) {
	var logb strings.Builder // awaitSignals logs from its own goroutine only
	log := slog.New(slog.NewTextHandler(&logb, nil))

	f := newFake()
	sig := make(chan os.Signal, 16)
	sig <- syscall.SIGTERM
	sig <- syscall.SIGTERM
	assert.Equal(t, 143, awaitSignals(f, sig, time.Hour, log), "the second SIGTERM cancels")
	assert.True(t, f.isStopped())
	assert.Contains(t, logb.String(), "second signal")

	f = newFake()
	sig <- syscall.SIGHUP
	sig <- syscall.SIGINT
	sig <- syscall.SIGHUP
	sig <- syscall.SIGINT
	assert.Equal(t, 130, awaitSignals(f, sig, time.Hour, log), "SIGHUP neither drains nor cancels; the second SIGINT does")
	assert.Equal(t, 2, strings.Count(logb.String(), "SIGHUP ignored"))

	f = newFake()
	sig <- syscall.SIGTERM
	assert.Equal(t, exitFail, awaitSignals(f, sig, 10*time.Millisecond, log), "a drain past its timeout")
	assert.True(t, f.isStopped())
	assert.Contains(t, logb.String(), "drain incomplete")

	f = newFake()
	f.errs <- errors.New("accept: too many open files")
	assert.Equal(t, exitFail, awaitSignals(f, sig, time.Hour, log))
	assert.True(t, f.isStopped())
	assert.Contains(t, logb.String(), "listener failed")
}

// TestServeBinaryIgnoresSIGHUP: SIGHUP during a proof neither ends the
// daemon nor the proof; it is logged, and SIGTERM then drains as usual
// (exit 0, the socket removed).
func TestServeBinaryIgnoresSIGHUP(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP (visible): builds and runs the daemon binary; not in -short")
	}
	p := startDaemon(t, t.TempDir())
	c := dialDaemon(t, p)
	ctx := testCtx(t)
	sub, err := c.SubmitProof(ctx, porepReq(1<<14, 2))
	require.NoError(t, err)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
	require.Eventually(t, func() bool { return strings.Contains(p.logText(), "SIGHUP ignored") }, time.Minute, 5*time.Millisecond)
	res, err := c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: sub.GetJobId()})
	require.NoError(t, err, "the proof running at SIGHUP finishes")
	assert.True(t, res.GetVerified())
	_, err = c.SubmitProof(ctx, porepReq(1024, 3))
	require.NoError(t, err, "the daemon still takes jobs")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 0, p.wait(t))
	_, err = os.Stat(p.sock)
	assert.ErrorIs(t, err, os.ErrNotExist, "the socket is removed")
}

// TestServeBinarySecondSignalSoonAfterTheFirst: a second SIGTERM 300 ms
// after the first, while several jobs run, cancels them: exit 143, logged.
func TestServeBinarySecondSignalSoonAfterTheFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP (visible): builds and runs the daemon binary; not in -short")
	}
	p := startDaemon(t, t.TempDir(), "-synthesizers", "2")
	c := dialDaemon(t, p)
	ctx := testCtx(t)
	_, err := c.Prove(ctx, porepReq(1<<15, 1)) // the key is made: the jobs below prove at once
	require.NoError(t, err)
	for i := range 6 {
		_, err := c.SubmitProof(ctx, porepReq(1<<15, uint64(10+i)))
		require.NoError(t, err)
	}
	time.Sleep(200 * time.Millisecond)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 143, p.wait(t), "the second SIGTERM cancelled the jobs: 128+15")
	assert.Contains(t, p.logText(), "second signal")
	_, err = os.Stat(p.sock)
	assert.ErrorIs(t, err, os.ErrNotExist, "the socket is removed")
}
