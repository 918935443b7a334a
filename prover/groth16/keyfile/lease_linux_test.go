package keyfile

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile/keyfiletest"
)

// leasedWhat is what a child's failure means in these tests.
const leasedWhat = "a read of the mapping past the truncated file's end ends the process (SIGBUS) unless the key is leased"

// inChild runs the calling test's body in a child process (keyfiletest).
func inChild(t *testing.T) bool {
	t.Helper()
	return keyfiletest.InChild(t, leasedWhat)
}

// pointBytes is every point slice of pk as bytes: views of the mapping
// for a mapped key.
func pointBytes(pk *groth16.ProvingKey) [][]byte {
	g1, _ := pk.Bases()
	var out [][]byte
	for _, s := range g1 {
		out = append(out, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0]))))
	}
	b2 := pk.G2.B
	return append(out, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b2))), len(b2)*int(unsafe.Sizeof(b2[0]))))
}

// leasedKey writes a key file under a temporary directory and opens it
// leased, skipping where no lease can be taken there.
func leasedKey(t *testing.T, onBreak func(*Key)) (k *Key, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "k.rawpk")
	require.NoError(t, Write(path, testKey(t)))
	k, err := Open(path, Leased(onBreak))
	require.NoError(t, err)
	t.Cleanup(func() { _ = k.Close() })
	if err := k.LeaseErr(); err != nil {
		t.Skipf("SKIP (visible): %s: %v", path, err)
	}
	require.Greater(t, k.Header.FileSize, uint64(4*Align), "sections past the first pages")
	return k, path
}

// readers reads every point of k on plain goroutines (as gnark-crypto's
// MSM workers do: no fault guard), comparing them with want, until stop
// is called (or the test ends: before the key is closed); stop returns
// the number of whole passes and of mismatches.
func readers(t *testing.T, k *Key, want [][]byte) (stop func() (passes, bad int64)) {
	var (
		wg          sync.WaitGroup
		n, mismatch atomic.Int64
		once        sync.Once
		done        = make(chan struct{})
	)
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				for i, b := range pointBytes(k.PK) {
					if !bytes.Equal(b, want[i]) {
						mismatch.Add(1)
					}
				}
				n.Add(1)
			}
		})
	}
	stop = func() (int64, int64) {
		once.Do(func() { close(done) })
		wg.Wait()
		return n.Load(), mismatch.Load()
	}
	t.Cleanup(func() { stop() })
	return stop
}

func clone(bs [][]byte) [][]byte {
	out := make([][]byte, len(bs))
	for i, b := range bs {
		out[i] = bytes.Clone(b)
	}
	return out
}

// TestTruncatedByAnotherProcessWhileRead: readers loop over a leased key's
// points while another process truncates its file: the truncation waits
// until the key reads a private copy, then completes; the readers saw the
// original bytes throughout, nothing faulted, onBreak named the key, and
// the key still holds (and verifies as) the original bytes. Without the
// lease the child process ends with SIGBUS.
func TestTruncatedByAnotherProcessWhileRead(t *testing.T) {
	if !inChild(t) {
		return
	}
	broke := make(chan *Key, 1)
	k, path := leasedKey(t, func(k *Key) { broke <- k })
	want := clone(pointBytes(k.PK))
	stop := readers(t, k, want)
	time.Sleep(20 * time.Millisecond)

	start := time.Now()
	out, err := keyfiletest.TruncateCmd(path, Align).CombinedOutput()
	require.NoError(t, err, "truncate: %s", out)
	t.Logf("truncate took %v", time.Since(start))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, int64(Align), st.Size(), "the truncation completed")
	time.Sleep(50 * time.Millisecond) // the readers go on past the file's new end
	passes, bad := stop()
	assert.Positive(t, passes)
	assert.Zero(t, bad, "the readers saw the original bytes throughout")

	select {
	case got := <-broke:
		assert.Same(t, k, got)
		assert.Equal(t, path, got.Path)
	case <-time.After(10 * time.Second):
		t.Fatal("onBreak was not called")
	}
	err = k.Changed()
	require.ErrorIs(t, err, ErrChanged)
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), "private copy")
	assert.NoError(t, k.Check(), "the key reads its private copy: whole")
	assert.NoError(t, k.Verify(), "the copy is the verified content")
	assert.Equal(t, want, pointBytes(k.PK))
	require.NoError(t, k.Close())
}

// TestNoRoomForACopyHoldsTheLeaseUntilClose: where a private copy is not
// made (too little memory), the key reports the change (Check fails,
// naming the file), the other process's truncation waits while the key's
// readers go on, and Close lets it complete.
func TestNoRoomForACopyHoldsTheLeaseUntilClose(t *testing.T) {
	if !inChild(t) {
		return
	}
	forcePrivateErr = errTestNoRoom
	defer func() { forcePrivateErr = nil }()
	broke := make(chan *Key, 1)
	k, path := leasedKey(t, func(k *Key) { broke <- k })
	want := clone(pointBytes(k.PK))
	stop := readers(t, k, want)

	cmd := keyfiletest.TruncateCmd(path, Align)
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-broke:
	case <-time.After(10 * time.Second):
		t.Fatal("onBreak was not called")
	}
	err := k.Check()
	require.ErrorIs(t, err, ErrChanged)
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), "no private copy")
	assert.Contains(t, err.Error(), errTestNoRoom.Error())
	time.Sleep(50 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("the truncation completed (%v) while the key still reads the file", err)
	default:
	}
	passes, bad := stop()
	assert.Positive(t, passes)
	assert.Zero(t, bad)
	require.NoError(t, k.Close())
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the truncation still waits after Close")
	}
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, int64(Align), st.Size())
}

var errTestNoRoom = &testErr{"no room (test)"}

type testErr struct{ s string }

func (e *testErr) Error() string { return e.s }

// TestNoLeaseOnAFileOpenForWriting: a file open for writing elsewhere
// cannot be leased: the key opens, and LeaseErr names the reason.
func TestNoLeaseOnAFileOpenForWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.rawpk")
	require.NoError(t, Write(path, testKey(t)))
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer w.Close()
	k, err := Open(path, Leased(nil))
	require.NoError(t, err)
	defer k.Close()
	err = k.LeaseErr()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "open for writing elsewhere")
	assert.NoError(t, k.Check())
	assert.NoError(t, k.Changed())

	plain, err := Open(path)
	require.NoError(t, err)
	defer plain.Close()
	assert.NoError(t, plain.LeaseErr(), "not asked for")
}
