package renameio

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteFileReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	require.NoError(t, WriteFile(path, []byte("old"), 0o644))
	require.NoError(t, WriteFile(path, []byte("new contents"), 0o600))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new contents", string(b))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	assertOnlyFiles(t, dir, "f")
}

func TestFailedWriteLeavesOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	require.NoError(t, WriteFile(path, []byte("old"), 0o644))
	boom := errors.New("boom")
	err := WriteFrom(path, 0o644, func(w io.Writer) error {
		_, _ = w.Write([]byte("half"))
		return boom
	})
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), path)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "old", string(b))
	assertOnlyFiles(t, dir, "f")
}

func TestPendingFileCleanupAndDoubleClose(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	p, err := Create(path, 0o644)
	require.NoError(t, err)
	_, err = p.Write([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, p.CloseAtomicallyReplace())
	assert.Error(t, p.CloseAtomicallyReplace(), "a second replace must fail")
	p.Cleanup() // after a replace: must not remove the destination
	assertOnlyFiles(t, dir, "f")

	q, err := Create(filepath.Join(dir, "g"), 0o644)
	require.NoError(t, err)
	q.Cleanup()
	assertOnlyFiles(t, dir, "f")
}

func TestCreateInMissingDirFails(t *testing.T) {
	_, err := Create(filepath.Join(t.TempDir(), "no", "such", "f"), 0o644)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no/such/f")
}

func assertOnlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	assert.ElementsMatch(t, names, got, "temporaries must not be left behind")
}
