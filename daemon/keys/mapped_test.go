package keys

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/internal/renameio"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile"
)

func encodePK(t *testing.T, pk *groth16.ProvingKey) []byte {
	t.Helper()
	var buf bytes.Buffer
	_, err := pk.WriteTo(&buf)
	require.NoError(t, err)
	return buf.Bytes()
}

func (m *Manager) mappedKey(key string) *keyfile.Key {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.entries[key]; ok {
		return e.mapped
	}
	return nil
}

func TestDevelopmentKeyIsMappedFromItsRawFile(t *testing.T) {
	dir := t.TempDir()
	m, err := New(Config{Dir: dir, DevSeed: 4})
	require.NoError(t, err)
	c := shape(t, 1024)
	h, err := m.Acquire(context.Background(), c)
	require.NoError(t, err)
	first := m.mappedKey(c.Key)
	require.NotNil(t, first, "a fresh setup proves from the raw file it wrote, not from the heap")
	assert.Same(t, first.PK, h.PK)
	want := encodePK(t, h.PK)
	h.Release()
	raws, err := filepath.Glob(filepath.Join(dir, "*"+RawExt))
	require.NoError(t, err)
	require.Len(t, raws, 1, "the setup wrote a raw key file")

	_, err = m.EvictKey(c.Key, Cold)
	require.NoError(t, err)
	h, err = m.Acquire(context.Background(), c)
	require.NoError(t, err)
	k := m.mappedKey(c.Key)
	require.NotNil(t, k, "from cold, the raw file is mapped")
	assert.True(t, h.Dev)
	assert.Same(t, k.PK, h.PK)
	assert.Equal(t, want, encodePK(t, h.PK))
	h.Release()
	_, err = m.EvictKey(c.Key, Cold)
	require.NoError(t, err)
	assert.Error(t, k.Verify(), "dropping the key to cold unmapped it")
}

// A key set up here leaves the Go heap once its raw file is written: a key
// in the heap would hold the collector's goal at twice its size, so that
// garbage as large as the key could build up beside it (27 GiB at 2^27).
func TestFreshDevelopmentKeyLeavesTheHeap(t *testing.T) {
	m, err := New(Config{Dir: t.TempDir(), DevSeed: 5})
	require.NoError(t, err)
	c := shape(t, 1<<16)
	h, err := m.Acquire(context.Background(), c)
	require.NoError(t, err)
	defer h.Release()
	key := keyBytes(h.PK)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	assert.Less(t, int64(ms.HeapAlloc), key/2, "heap %d bytes with the key (%d bytes) ready", ms.HeapAlloc, key)
	require.NotNil(t, m.mappedKey(c.Key))
}

// productionRaw writes c's development keys into a new directory as
// production files: <name>.rawpk (checked) and <name>.vk, and <name>.pk
// when withPK.
func productionRaw(t *testing.T, c string, h *Handle, withPK bool) (dir, rawPath string) {
	t.Helper()
	dir = t.TempDir()
	base := filepath.Join(dir, FileName(c))
	require.NoError(t, keyfile.Write(base+RawExt, h.PK))
	require.NoError(t, renameio.WriteFrom(base+".vk", 0o644, func(w io.Writer) error { _, err := h.VK.WriteTo(w); return err }))
	if withPK {
		require.NoError(t, renameio.WriteFrom(base+".pk", 0o644, func(w io.Writer) error { _, err := h.PK.WriteTo(w); return err }))
	}
	return dir, base + RawExt
}

func TestProductionRawKeyFile(t *testing.T) {
	c := shape(t, 1024)
	dev, err := New(Config{Dir: t.TempDir(), DevSeed: 9})
	require.NoError(t, err)
	hd, err := dev.Acquire(context.Background(), c)
	require.NoError(t, err)
	want := encodePK(t, hd.PK)
	for _, withPK := range []bool{false, true} {
		dir, _ := productionRaw(t, c.Key, hd, withPK)
		m, err := New(Config{Dir: dir, NoGenerate: true})
		require.NoError(t, err)
		h, err := m.Acquire(context.Background(), c)
		require.NoError(t, err, "with .pk too: %v", withPK)
		assert.False(t, h.Dev, "key files in the directory are production keys")
		assert.NotNil(t, m.mappedKey(c.Key), "the raw file is preferred to decoding .pk")
		assert.Equal(t, want, encodePK(t, h.PK))
		h.Release()
	}
	hd.Release()
}

// productionRawKey sets up a porep-synth 2^10 development key and returns
// its circuit and a directory that holds it as a production raw key file
// (no .pk), with that file's path.
func productionRawKey(t *testing.T) (c *registry.Resolved, dir, rawPath string) {
	t.Helper()
	c = shape(t, 1024)
	dev, err := New(Config{Dir: t.TempDir(), DevSeed: 9})
	require.NoError(t, err)
	hd, err := dev.Acquire(context.Background(), c)
	require.NoError(t, err)
	defer hd.Release()
	dir, rawPath = productionRaw(t, c.Key, hd, false)
	return c, dir, rawPath
}

// TestRawFileHashedOncePerManager: a manager hashes a raw key file's
// sections the first time it maps it and trusts it while it is unchanged
// (size, time, header sums); another manager, or a changed time, hashes
// again and finds the damage.
func TestRawFileHashedOncePerManager(t *testing.T) {
	c, dir, rawPath := productionRawKey(t)
	m, err := New(Config{Dir: dir, NoGenerate: true})
	require.NoError(t, err)
	h, err := m.Acquire(context.Background(), c)
	require.NoError(t, err)
	h.Release()
	_, err = m.EvictKey(c.Key, Cold)
	require.NoError(t, err)

	st, err := os.Stat(rawPath)
	require.NoError(t, err)
	b, err := os.ReadFile(rawPath)
	require.NoError(t, err)
	hdr, err := keyfile.ParseHeader(b[:keyfile.Align], int64(len(b)))
	require.NoError(t, err)
	b[hdr.Sections[keyfile.SecA].Offset+5] ^= 0x20 // a point's limb, in place
	require.NoError(t, os.WriteFile(rawPath, b, 0o644))
	require.NoError(t, os.Chtimes(rawPath, st.ModTime(), st.ModTime()))

	h, err = m.Acquire(context.Background(), c)
	require.NoError(t, err, "unchanged size and time: not hashed again (the fast path)")
	h.Release()
	_, err = m.EvictKey(c.Key, Cold)
	require.NoError(t, err)

	other, err := New(Config{Dir: dir, NoGenerate: true})
	require.NoError(t, err)
	_, err = other.Acquire(context.Background(), c)
	require.ErrorIs(t, err, keyfile.ErrChecksum, "a new manager hashes the file")
	assert.ErrorContains(t, err, rawPath)
	assert.ErrorContains(t, err, "section A")

	later := st.ModTime().Add(time.Second)
	require.NoError(t, os.Chtimes(rawPath, later, later))
	_, err = m.Acquire(context.Background(), c)
	require.ErrorIs(t, err, keyfile.ErrChecksum, "a changed file is hashed again")
}

// TestLoadTouchesBeforeReady: a load marks its key's files as used (their
// access time, for trimDir's order) before its Acquire returns, and writes
// their access time alone. A touch that wrote the modification time back
// as it had read it, after the key was ready, once undid the new time a
// caller had just given the raw file, and the manager then trusted the
// changed file without hashing it (TestRawFileHashedOncePerManager, in a
// container).
func TestLoadTouchesBeforeReady(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("access times are read on Linux only (dirsys_linux.go)")
	}
	c, dir, rawPath := productionRawKey(t)
	m, err := New(Config{Dir: dir, NoGenerate: true})
	require.NoError(t, err)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m.now = func() time.Time { return at }
	mod := time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC)
	require.NoError(t, os.Chtimes(rawPath, mod, mod))
	h, err := m.Acquire(context.Background(), c)
	require.NoError(t, err)
	defer h.Release()
	st, err := os.Stat(rawPath)
	require.NoError(t, err)
	assert.True(t, accessTime(st).Equal(at), "the load's touch is done once Acquire returns: access time %v", accessTime(st))
	assert.True(t, st.ModTime().Equal(mod), "the modification time is left as it was: %v", st.ModTime())
}

// TestLoadBytesCountsWhatALoadAdds: a development key's load counts its
// compile and setup scalars beside the key, a production key file the key
// alone, and a key held already nothing.
func TestLoadBytesCountsWhatALoadAdds(t *testing.T) {
	ctx := context.Background()
	c := shape(t, 1024)
	dev, err := New(Config{Dir: t.TempDir(), DevSeed: 9})
	require.NoError(t, err)
	defer dev.Close()
	sh, err := dev.Shape(ctx, c)
	require.NoError(t, err)
	require.Positive(t, sh.SetupBytes())
	assert.Equal(t, sh.KeyBytes()+sh.CompileBytes()+sh.SetupBytes(), dev.LoadBytes(c, sh), "a development setup")
	h, err := dev.Acquire(ctx, c)
	require.NoError(t, err)
	assert.Zero(t, dev.LoadBytes(c, sh), "held: an Acquire joins it")
	h.Release()
	assert.Zero(t, dev.LoadBytes(c, sh), "still warm after the release")

	dir, _ := productionRaw(t, c.Key, h, false)
	prod, err := New(Config{Dir: dir, NoGenerate: true})
	require.NoError(t, err)
	defer prod.Close()
	assert.Equal(t, sh.KeyBytes(), prod.LoadBytes(c, sh), "a production key file: the key alone")
}

// TestTruncatedMappedKeyFailsItsUsers: once a mapped production key file
// that could not be leased (open for writing elsewhere) is truncated, a
// holder about to prove (MakeRoomOn) and a new Acquire get an error naming
// the file; the key goes cold at the last release, and a whole file again
// loads.
func TestTruncatedMappedKeyFailsItsUsers(t *testing.T) {
	c := shape(t, 1024)
	dir, raw := productionRaw(t, c.Key, devHandle(t, 1024, 5), false)
	whole, err := os.ReadFile(raw)
	require.NoError(t, err)
	w, err := os.OpenFile(raw, os.O_WRONLY, 0) // no lease while open for writing
	require.NoError(t, err)
	defer w.Close()
	m, err := New(Config{Dir: dir, NoGenerate: true})
	require.NoError(t, err)
	defer m.Close()
	held, err := m.Acquire(context.Background(), c)
	require.NoError(t, err)
	require.NotNil(t, m.mappedKey(c.Key))
	require.ErrorContains(t, m.mappedKey(c.Key).LeaseErr(), "open for writing")
	require.NoError(t, m.MakeRoomOn(held, "cpu"))

	require.NoError(t, w.Truncate(keyfile.Align))
	err = m.MakeRoomOn(held, "cpu")
	require.ErrorIs(t, err, keyfile.ErrTruncated)
	assert.Contains(t, err.Error(), raw)
	_, err = m.Acquire(context.Background(), c)
	require.ErrorIs(t, err, keyfile.ErrTruncated)
	assert.NotNil(t, m.mappedKey(c.Key), "still mapped while held")
	held.Release()
	assert.Nil(t, m.mappedKey(c.Key), "cold at the last release")
	require.NoError(t, w.Close())

	reloadsWhenWhole(t, m, c, raw, whole)
}

// TestLeasedKeyFileTruncated: a leased key file truncated while a holder
// uses the key: the truncation waits until the key reads a private copy,
// the holder goes on with the whole key, a new Acquire is refused naming
// the file, the key goes cold at the last release, the next load reports
// the short file, and a whole file loads again.
func TestLeasedKeyFileTruncated(t *testing.T) {
	c := shape(t, 1024)
	dir, raw := productionRaw(t, c.Key, devHandle(t, 1024, 5), false)
	whole, err := os.ReadFile(raw)
	require.NoError(t, err)
	m, err := New(Config{Dir: dir, NoGenerate: true})
	require.NoError(t, err)
	defer m.Close()
	held, err := m.Acquire(context.Background(), c)
	require.NoError(t, err)
	k := m.mappedKey(c.Key)
	require.NotNil(t, k)
	if err := k.LeaseErr(); err != nil {
		t.Skipf("SKIP (visible): %v", err)
	}
	want := encodePK(t, held.PK)

	require.NoError(t, os.Truncate(raw, keyfile.Align), "waits for the lease, then truncates")
	require.NoError(t, m.MakeRoomOn(held, "cpu"), "the holder goes on: the key reads its private copy")
	assert.Equal(t, want, encodePK(t, held.PK))
	require.ErrorIs(t, k.Changed(), keyfile.ErrChanged)
	_, err = m.Acquire(context.Background(), c)
	require.ErrorIs(t, err, keyfile.ErrChanged, "a new user is refused: the key drains")
	assert.Contains(t, err.Error(), raw)
	held.Release()
	assert.Nil(t, m.mappedKey(c.Key), "cold at the last release")

	reloadsWhenWhole(t, m, c, raw, whole)
}

// reloadsWhenWhole checks that loading c's key from its truncated file raw
// reports the short file, and that it loads again once raw holds whole.
func reloadsWhenWhole(t *testing.T, m *Manager, c *registry.Resolved, raw string, whole []byte) {
	t.Helper()
	_, err := m.Acquire(context.Background(), c)
	require.ErrorIs(t, err, keyfile.ErrTruncated, "the load reports the short file")
	require.NoError(t, renameio.WriteFrom(raw, 0o644, func(w io.Writer) error { _, err := w.Write(whole); return err }))
	h, err := m.Acquire(context.Background(), c)
	require.NoError(t, err, "a whole file loads again")
	h.Release()
}

// discardBases from 0 gives a heap copy's pages back at once: the whole pages of
// every bases set read as zeros afterwards (the handover to the mapping
// relies on it, not on a collection).
func TestDiscardKeyGivesThePagesBack(t *testing.T) {
	m, err := New(Config{Dir: t.TempDir(), DevSeed: 6, DevKeysInMemory: true})
	require.NoError(t, err)
	c := shape(t, 1<<14)
	h, err := m.Acquire(context.Background(), c)
	require.NoError(t, err)
	defer h.Release()
	g1, g2 := h.PK.Bases()
	for i := range g1 {
		g1[i] = slices.Clone(g1[i])
	}
	for i := range g2 {
		g2[i] = slices.Clone(g2[i])
	}
	a, b2 := g1[0], g2[0]
	require.Greater(t, len(a)*96, 3*os.Getpagesize(), "sets of several pages")
	mid, mid2 := len(a)/2, len(b2)/2
	require.False(t, a[mid].IsInfinity())
	require.False(t, b2[mid2].IsInfinity())
	discardBases(m.cfg.Log, c.Key, g1, g2, 0)
	assert.Equal(t, bls12381.G1Affine{}, a[mid], "a G1 point inside the set's whole pages reads as zeros")
	assert.Equal(t, bls12381.G2Affine{}, b2[mid2], "a G2 point too")
	assert.False(t, h.PK.G1.A[mid].IsInfinity(), "the key's own copy is untouched")
}
