package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/daemon/assembly"
	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/internal/renameio"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile"
)

func TestKeysLsVerifyRm(t *testing.T) {
	dir := t.TempDir()
	m, err := keys.New(keys.Config{Dir: dir, DevSeed: 1})
	require.NoError(t, err)
	c, err := registry.Default().Resolve("porep-synth", map[string]uint64{"constraints": 1024})
	require.NoError(t, err)
	h, err := m.Acquire(context.Background(), c)
	require.NoError(t, err)
	made, err := keys.ListDir(dir)
	require.NoError(t, err)
	require.Len(t, made, 1)
	for _, p := range made[0].Paths { // a .pk as earlier versions wrote beside the raw file
		require.False(t, strings.HasSuffix(p, ".pk"), "the daemon writes no development .pk: %s", p)
		if strings.HasSuffix(p, keys.RawExt) {
			require.NoError(t, renameio.WriteFrom(strings.TrimSuffix(p, keys.RawExt)+".pk", 0o644,
				func(w io.Writer) error { _, err := h.PK.WriteTo(w); return err }))
		}
	}
	h.Release()
	m.Close()
	require.NoError(t, os.WriteFile(dir+"/prod.vk", []byte("not a key"), 0o644))

	cmd := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"keys", "-key-dir", dir}, args...), &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, _ := cmd("ls")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "porep-synth-constraints=1024-setup1-")
	assert.Contains(t, out, "development")
	assert.Contains(t, out, "prod  ")

	code, out, _ = cmd("verify")
	assert.Equal(t, exitFail, code, "prod.vk is damaged")
	assert.Contains(t, out, "DAMAGED  "+dir+"/prod.vk")
	assert.Contains(t, out, ".rawpk (used)")
	assert.Contains(t, out, ".pk (not used (a .rawpk is))")

	ls, err := keys.ListDir(dir)
	require.NoError(t, err)
	dev := ls[0].Name
	require.True(t, strings.HasPrefix(dev, "porep-synth"))
	code, out, _ = cmd("verify", dev)
	assert.Equal(t, exitOK, code, out)

	code, _, errs := cmd("rm", "prod")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, "production key files are never deleted")
	code, out, _ = cmd("rm", dev)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "removed ")
	code, _, _ = cmd("rm", "-force", "prod")
	assert.Equal(t, exitOK, code)
	ls, err = keys.ListDir(dir)
	require.NoError(t, err)
	assert.Empty(t, ls)
	code, _, _ = cmd("bogus")
	assert.Equal(t, exitUsage, code)
}

func TestKeysDefaultDirFollowsServe(t *testing.T) {
	env := map[string]string{"CUZK_DAEMON_KEY_DIR": "/var/lib/cuzk/keys"}
	assert.Equal(t, "/var/lib/cuzk/keys", defaultKeyDir(func(k string) string { return env[k] }))
	assert.Equal(t, assembly.DefaultConfig().KeyDir, defaultKeyDir(func(string) string { return "" }))
}

// TestKeysLsVerifySeeLinksAndPairs: keys ls and keys verify show key files
// that are symbolic links (a load follows them), and verify fails a .vk
// of another setup beside the .rawpk a load maps.
func TestKeysLsVerifySeeLinksAndPairs(t *testing.T) {
	c, err := registry.Default().Resolve("porep-synth", map[string]uint64{"constraints": 1024})
	require.NoError(t, err)
	handle := func(seed uint64) *keys.Handle {
		m, err := keys.New(keys.Config{Dir: t.TempDir(), DevSeed: seed})
		require.NoError(t, err)
		h, err := m.Acquire(context.Background(), c)
		require.NoError(t, err)
		t.Cleanup(func() { h.Release(); m.Close() })
		return h
	}
	dir, store := t.TempDir(), t.TempDir()
	base := filepath.Join(store, keys.FileName(c.Key))
	h1, h2 := handle(1), handle(2)
	require.NoError(t, keyfile.Write(base+keys.RawExt, h1.PK))
	writeVK := func(vk *groth16.VerifyingKey) {
		require.NoError(t, renameio.WriteFrom(base+".vk", 0o644, func(w io.Writer) error { _, err := vk.WriteTo(w); return err }))
	}
	writeVK(h1.VK)
	for _, ext := range []string{keys.RawExt, ".vk"} {
		require.NoError(t, os.Symlink(base+ext, filepath.Join(dir, keys.FileName(c.Key)+ext)))
	}
	cmd := func(args ...string) (int, string) {
		var out bytes.Buffer
		code := run(context.Background(), append([]string{"keys", "-key-dir", dir}, args...), &out, io.Discard)
		return code, out.String()
	}
	code, out := cmd("ls")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, keys.FileName(c.Key), "a linked key is listed")
	code, out = cmd("verify")
	assert.Equal(t, exitOK, code, out)
	assert.Contains(t, out, "ok       "+filepath.Join(dir, keys.FileName(c.Key))+keys.RawExt+" (used)")

	writeVK(h2.VK) // another setup's verifying key, through the same link
	code, out = cmd("verify")
	assert.Equal(t, exitFail, code, out)
	assert.Contains(t, out, "DAMAGED  "+filepath.Join(dir, keys.FileName(c.Key))+".vk")
	assert.Contains(t, out, "not one pair")
}
