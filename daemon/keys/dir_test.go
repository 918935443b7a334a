package keys

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/internal/renameio"
)

func flipByte(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	b[len(b)/2] ^= 0xff
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// TestTempFilesOfInterruptedWritesRemovedAtStart: alone on the directory,
// a manager removes every temporary file; beside another one, only those
// not written for StaleTemp.
func TestTempFilesOfInterruptedWritesRemovedAtStart(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, ".porep-synth-constraints=1024-setup1-0123456789abcdef01234567.rawpk.tmp123")
	old := filepath.Join(dir, ".x.pk.tmp77")
	keep := filepath.Join(dir, "notes.txt")
	for _, p := range []string{fresh, old, keep} {
		require.NoError(t, os.WriteFile(p, []byte("partial"), 0o644))
	}
	other, err := New(Config{Dir: dir}) // alone: removes both
	require.NoError(t, err)
	defer other.Close()
	for _, p := range []string{fresh, old} {
		assert.NoFileExists(t, p)
	}
	assert.FileExists(t, keep)

	for _, p := range []string{fresh, old} {
		require.NoError(t, os.WriteFile(p, []byte("partial"), 0o644))
	}
	hour := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(old, hour, hour))
	m, err := New(Config{Dir: dir}) // beside other: only the stale one
	require.NoError(t, err)
	defer m.Close()
	assert.FileExists(t, fresh, "another manager may still be writing it")
	assert.NoFileExists(t, old)
}

// TestDirBudgetDeletesLeastRecentlyUsedDevelopmentKeys: over the budget,
// development keys go, least recently used first; production files and
// keys in use stay.
func TestDirBudgetDeletesLeastRecentlyUsedDevelopmentKeys(t *testing.T) {
	dir := t.TempDir()
	gen, err := New(Config{Dir: dir, DevSeed: 1})
	require.NoError(t, err)
	a, b := shape(t, 1024), shape(t, 2048)
	ha, err := gen.Acquire(context.Background(), a)
	require.NoError(t, err)
	ha.Release()
	hb, err := gen.Acquire(context.Background(), b)
	require.NoError(t, err)
	hb.Release()
	gen.Close()
	prod := filepath.Join(dir, "prod-shape.pk")
	require.NoError(t, os.WriteFile(prod, make([]byte, 1<<20), 0o644))
	// b used an hour ago, a a day ago, the production key a week ago.
	ls, err := ListDir(dir)
	require.NoError(t, err)
	require.Len(t, ls, 3)
	ages := map[string]time.Duration{FileName(a.Key): 24 * time.Hour, FileName(b.Key): time.Hour, "prod-shape": 7 * 24 * time.Hour}
	var total int64
	for _, k := range ls {
		total += k.Bytes
		at := time.Now().Add(-ages[devShape(k.Name)])
		for _, p := range k.Paths {
			require.NoError(t, os.Chtimes(p, at, at))
		}
	}
	m, err := New(Config{Dir: dir, DirBudget: total - 1})
	require.NoError(t, err)
	left, err := ListDir(dir)
	require.NoError(t, err)
	var names []string
	for _, k := range left {
		names = append(names, devShape(k.Name))
	}
	assert.ElementsMatch(t, []string{FileName(b.Key), "prod-shape"}, names, "the least recently used development key went")
	m.Close()

	// Loading b marks it used; a budget below b alone deletes nothing held
	// and never the production file.
	m2, err := New(Config{Dir: dir, DirBudget: 1, DevSeed: 1})
	require.NoError(t, err)
	defer m2.Close()
	assert.FileExists(t, prod, "production files are never deleted")
	left, err = ListDir(dir)
	require.NoError(t, err)
	require.Len(t, left, 1, "b went too: it is not held")
	h, err := m2.Acquire(context.Background(), b) // generated again, then held while the directory is trimmed
	require.NoError(t, err)
	defer h.Release()
	_, err = m2.trimDir()
	require.NoError(t, err)
	left, err = ListDir(dir)
	require.NoError(t, err)
	assert.Len(t, left, 2, "a key the manager holds keeps its files")

	_, err = RemoveKey(dir, "prod-shape", false)
	require.ErrorIs(t, err, ErrProduction)
	removed, err := RemoveKey(dir, "prod-shape", true)
	require.NoError(t, err)
	assert.Equal(t, []string{prod}, removed)
}

// TestDamagedPKBesideARawFileIsFound is issue 28's finding: a .pk a load
// never reads, because the .rawpk beside it is used, is checked anyway; a
// damaged development one is deleted, a damaged production one reported.
// The daemon writes no development .pk (its raw file stands for it); the
// one here is as earlier versions left it.
func TestDamagedPKBesideARawFileIsFound(t *testing.T) {
	c := shape(t, 1024)
	dir := t.TempDir()
	gen, err := New(Config{Dir: dir, DevSeed: 3})
	require.NoError(t, err)
	hd, err := gen.Acquire(context.Background(), c)
	require.NoError(t, err)
	gen.Close()
	ls, err := ListDir(dir)
	require.NoError(t, err)
	require.Len(t, ls, 1)
	var devPK string
	for _, p := range ls[0].Paths {
		assert.False(t, strings.HasSuffix(p, ".pk"), "a development key is its raw file and .vk: %s", p)
		if strings.HasSuffix(p, RawExt) {
			devPK = strings.TrimSuffix(p, RawExt) + ".pk"
		}
	}
	require.NotEmpty(t, devPK)
	require.NoError(t, renameio.WriteFrom(devPK, 0o644, func(w io.Writer) error { _, err := hd.PK.WriteTo(w); return err }))
	ls, err = ListDir(dir)
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.Contains(t, ls[0].Paths, devPK)
	flipByte(t, devPK)
	checks := VerifyKey(ls[0])
	for _, ch := range checks {
		if ch.Path == devPK {
			assert.Error(t, ch.Err, "verify finds the damaged .pk")
			assert.False(t, ch.Used, "the .rawpk is used, not the .pk")
		} else {
			assert.NoError(t, ch.Err, ch.Path)
			assert.True(t, ch.Used, ch.Path)
		}
	}
	m, err := New(Config{Dir: dir, DevSeed: 3})
	require.NoError(t, err)
	defer m.Close()
	h, err := m.Acquire(context.Background(), c)
	require.NoError(t, err)
	h.Release()
	require.Eventually(t, func() bool { return m.Damaged()[devPK] != nil }, time.Minute, time.Millisecond)
	assert.NoFileExists(t, devPK, "a damaged development .pk is deleted")

	pdir, _ := productionRaw(t, c.Key, hd, true)
	pk := filepath.Join(pdir, FileName(c.Key)+".pk")
	flipByte(t, pk)
	p, err := New(Config{Dir: pdir, NoGenerate: true})
	require.NoError(t, err)
	defer p.Close()
	hp, err := p.Acquire(context.Background(), c)
	require.NoError(t, err, "the sound raw key file is used")
	hp.Release()
	require.Eventually(t, func() bool { return p.Damaged()[pk] != nil }, time.Minute, time.Millisecond)
	assert.FileExists(t, pk, "production files are never deleted")
	hd.Release()
}

// TestRawKeyFileNamesWhatALoadMaps: a production raw key file wins over a
// development one of the same key; another key's files are not taken;
// nothing there is "".
func TestRawKeyFileNamesWhatALoadMaps(t *testing.T) {
	dir := t.TempDir()
	const key = "porep-c2/constraints=1024"
	assert.Empty(t, RawKeyFile(dir, key))
	assert.Empty(t, RawKeyFile(filepath.Join(dir, "missing"), key))
	name := FileName(key)
	dev := filepath.Join(dir, name+"-setup1-"+strings.Repeat("ab", 12)+RawExt)
	other := filepath.Join(dir, FileName("porep-c2/constraints=2048")+RawExt)
	for _, p := range []string{dev, other} {
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
	}
	assert.Equal(t, dev, RawKeyFile(dir, key), "the development raw file")
	prod := filepath.Join(dir, name+RawExt)
	require.NoError(t, os.WriteFile(prod, []byte("x"), 0o644))
	assert.Equal(t, prod, RawKeyFile(dir, key), "a production raw file is what a load maps")
}
