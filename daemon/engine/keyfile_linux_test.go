package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/internal/renameio"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile/keyfiletest"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// TestKeyFileTruncatedDuringAProof: on the CPU backend, another process
// truncates the mapped key file of a proof in flight (in the device's
// Prove, before its MSMs read the bases): the engine keeps serving. The
// proof completes and verifies (the key reads the private copy of the
// bytes it verified), the next job's load reports the short file by name,
// and once the file is whole again a job proves. Without the key file's
// lease the process ends with SIGBUS.
func TestKeyFileTruncatedDuringAProof(t *testing.T) {
	if !keyfiletest.InChild(t, "the daemon's process ended: it must keep serving") {
		return
	}
	c := porep(t, 1024)
	dev, err := keys.New(keys.Config{Dir: t.TempDir(), DevSeed: 1})
	require.NoError(t, err)
	h, err := dev.Acquire(context.Background(), c)
	require.NoError(t, err)
	dir := t.TempDir()
	raw := filepath.Join(dir, keys.FileName(c.Key)+keys.RawExt)
	require.NoError(t, keyfile.Write(raw, h.PK))
	require.NoError(t, renameio.WriteFrom(filepath.Join(dir, keys.FileName(c.Key)+".vk"), 0o644, func(w io.Writer) error { _, err := h.VK.WriteTo(w); return err }))
	h.Release()
	dev.Close()
	whole, err := os.ReadFile(raw)
	require.NoError(t, err)
	probe, err := keyfile.Open(raw, keyfile.SkipVerify(), keyfile.Leased(nil))
	require.NoError(t, err)
	leaseErr := probe.LeaseErr()
	require.NoError(t, probe.Close())
	if leaseErr != nil {
		t.Skipf("SKIP (visible): %v", leaseErr)
	}

	km, err := keys.New(keys.Config{Dir: dir, NoGenerate: true})
	require.NoError(t, err)
	d := newFake(t, "cpu")
	var proves atomic.Int32
	d.before = func(context.Context, *r1cs.Assignment) error {
		if proves.Add(1) != 2 {
			return nil
		}
		if out, err := keyfiletest.TruncateCmd(raw, keyfile.Align).CombinedOutput(); err != nil {
			return fmt.Errorf("truncate from another process: %v: %s", err, out)
		}
		return nil
	}
	e := newEngine(t, Config{Keys: km, Synthesizers: 1}, d)

	r, err := wait(t, submit(t, e, c, 1, Normal))
	require.NoError(t, err)
	assert.True(t, r.Verified, "the mapped key proves")

	r, err = wait(t, submit(t, e, c, 2, Normal))
	require.NoError(t, err, "the proof in flight completes (a failure would name the file: %s)", raw)
	assert.True(t, r.Verified, "the proof in flight completes from the bytes verified")
	st, err := os.Stat(raw)
	require.NoError(t, err)
	require.Equal(t, int64(keyfile.Align), st.Size(), "the truncation completed")

	_, err = wait(t, submit(t, e, c, 3, Normal))
	require.ErrorIs(t, err, keyfile.ErrTruncated, "the next load reports the short file")
	assert.Contains(t, err.Error(), raw)

	require.NoError(t, renameio.WriteFrom(raw, 0o644, func(w io.Writer) error { _, err := w.Write(whole); return err }))
	r, err = wait(t, submit(t, e, c, 4, Normal))
	require.NoError(t, err, "the engine serves the next job once the file is whole")
	assert.True(t, r.Verified)
}
