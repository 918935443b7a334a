package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/internal/renameio"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile"
)

// TestServeBinarySurvivesATruncatedKeyFile: a production .rawpk the daemon
// has mapped is truncated; the next job fails with an error naming the
// file, the daemon keeps serving, and once the file is whole again the key
// loads and proves.
func TestServeBinarySurvivesATruncatedKeyFile(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP (visible): builds and runs the daemon binary; not in -short")
	}
	const constraints = 1 << 14
	c, err := registry.Default().Resolve("porep-synth", map[string]uint64{"constraints": constraints})
	require.NoError(t, err)
	dev, err := keys.New(keys.Config{Dir: t.TempDir(), DevSeed: 3})
	require.NoError(t, err)
	h, err := dev.Acquire(context.Background(), c)
	require.NoError(t, err)
	dir := t.TempDir()
	raw := filepath.Join(dir, "keys", keys.FileName(c.Key)+keys.RawExt)
	require.NoError(t, os.MkdirAll(filepath.Dir(raw), 0o755))
	require.NoError(t, keyfile.Write(raw, h.PK))
	require.NoError(t, renameio.WriteFrom(filepath.Join(dir, "keys", keys.FileName(c.Key)+".vk"), 0o644,
		func(w io.Writer) error { _, err := h.VK.WriteTo(w); return err }))
	whole, err := os.ReadFile(raw)
	require.NoError(t, err)
	h.Release()
	dev.Close()

	p := startDaemon(t, dir, "-no-dev-keys")
	cl := dialDaemon(t, p)
	ctx := testCtx(t)
	res, err := cl.Prove(ctx, porepReq(constraints, 1))
	require.NoError(t, err, "the production key file is mapped and proves")
	assert.True(t, res.GetVerified())

	require.NoError(t, os.Truncate(raw, 4096))
	_, err = cl.Prove(ctx, porepReq(constraints, 2))
	require.Error(t, err, "a job of the truncated key fails")
	assert.Contains(t, err.Error(), raw, "naming the file")
	assert.Contains(t, err.Error(), "truncated")
	st, err := cl.GetStatus(ctx, &pb.GetStatusRequest{})
	require.NoError(t, err, "the daemon keeps serving")
	assert.NotEmpty(t, st.GetDevices())

	require.NoError(t, renameio.WriteFrom(raw, 0o644, func(w io.Writer) error { _, err := w.Write(whole); return err }))
	res, err = cl.Prove(ctx, porepReq(constraints, 3))
	require.NoError(t, err, "the whole file again: the key loads anew and proves")
	assert.True(t, res.GetVerified())
}
