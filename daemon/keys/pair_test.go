package keys

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/internal/renameio"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile"
)

// devHandle is a development key of c made with seed, released at the
// test's end.
func devHandle(t *testing.T, constraints uint64, seed uint64) *Handle {
	t.Helper()
	m, err := New(Config{Dir: t.TempDir(), DevSeed: seed})
	require.NoError(t, err)
	h, err := m.Acquire(context.Background(), shape(t, constraints))
	require.NoError(t, err)
	t.Cleanup(func() { h.Release(); m.Close() })
	return h
}

// TestSymlinkedKeyFilesAreListedAndVerified: key files that are symbolic
// links, which a load follows, are listed and verified like any other; a
// dangling one is listed and reported.
func TestSymlinkedKeyFilesAreListedAndVerified(t *testing.T) {
	c := shape(t, 1024)
	dir, raw := productionRaw(t, c.Key, devHandle(t, 1024, 9), false)
	store := t.TempDir()
	for _, p := range []string{raw, strings.TrimSuffix(raw, RawExt) + ".vk"} {
		target := filepath.Join(store, filepath.Base(p))
		require.NoError(t, os.Rename(p, target))
		require.NoError(t, os.Symlink(target, p))
	}
	require.NoError(t, os.Symlink(filepath.Join(store, "gone.vk"), filepath.Join(dir, "gone.vk")))
	require.NoError(t, os.Symlink(store, filepath.Join(dir, "adir.pk")))

	all, err := ListDir(dir)
	require.NoError(t, err)
	require.Len(t, all, 2, "the linked key and the dangling link; a link to a directory is no key: %+v", all)
	byName := map[string]KeyFiles{}
	for _, k := range all {
		byName[k.Name] = k
	}
	k := byName[FileName(c.Key)]
	require.Len(t, k.Paths, 2)
	assert.Greater(t, k.Bytes, int64(4096), "the targets' sizes")
	for _, ck := range VerifyKey(k) {
		assert.NoError(t, ck.Err, ck.Path)
		assert.True(t, ck.Used, ck.Path)
	}
	gone := VerifyKey(byName["gone"])
	require.Len(t, gone, 1)
	assert.ErrorIs(t, gone[0].Err, os.ErrNotExist)

	m, err := New(Config{Dir: dir, NoGenerate: true})
	require.NoError(t, err)
	defer m.Close()
	h, err := m.Acquire(context.Background(), c)
	require.NoError(t, err, "a load follows the links")
	h.Release()
}

// TestKeysOfTwoSetupsAreNoPair: a .vk of another setup beside a .rawpk (or
// a .pk) is refused at load and by VerifyKey, naming both files, before
// any proof.
func TestKeysOfTwoSetupsAreNoPair(t *testing.T) {
	c := shape(t, 1024)
	other := devHandle(t, 1024, 2)
	for _, withRaw := range []bool{true, false} {
		dir, raw := productionRaw(t, c.Key, devHandle(t, 1024, 1), !withRaw)
		base := strings.TrimSuffix(raw, RawExt)
		if !withRaw {
			require.NoError(t, os.Remove(raw))
		}
		require.NoError(t, renameio.WriteFrom(base+".vk", 0o644, func(w io.Writer) error { _, err := other.VK.WriteTo(w); return err }))

		all, err := ListDir(dir)
		require.NoError(t, err)
		require.Len(t, all, 1)
		var vkErr error
		for _, ck := range VerifyKey(all[0]) {
			if strings.HasSuffix(ck.Path, ".vk") {
				vkErr = ck.Err
			} else {
				assert.NoError(t, ck.Err, "each file alone is sound: %s", ck.Path)
			}
		}
		require.ErrorIs(t, vkErr, keyfile.ErrNotAPair, "raw: %v", withRaw)
		assert.Contains(t, vkErr.Error(), base+".vk")

		m, err := New(Config{Dir: dir, NoGenerate: true})
		require.NoError(t, err)
		_, err = m.Acquire(context.Background(), c)
		require.ErrorIs(t, err, keyfile.ErrNotAPair, "raw: %v", withRaw)
		assert.Contains(t, err.Error(), base+".vk")
		m.Close()
	}
}
