package keyfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTruncatedAfterMappingIsAnError: a file truncated while mapped makes
// Check and Verify errors naming it (ErrTruncated), where reading past the
// new end used to end the process with SIGBUS.
func TestTruncatedAfterMappingIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.rawpk")
	require.NoError(t, Write(path, testKey(t)))
	k, err := Open(path)
	require.NoError(t, err)
	defer k.Close()
	require.NoError(t, k.Check())
	require.Greater(t, k.Header.FileSize, uint64(4*Align), "sections past the first pages")

	require.NoError(t, os.Truncate(path, Align))
	err = k.Check()
	require.ErrorIs(t, err, ErrTruncated)
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), "after it was mapped")
	err = k.Verify()
	require.ErrorIs(t, err, ErrTruncated, "hashing the mapping faults: an error, not the end of the process")
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), "faulted")
	require.NoError(t, k.Close())
	assert.Error(t, k.Check(), "a closed key")
}

// TestReplacedByRenameIsNotTruncated: a file replaced through a rename (as
// Write does) leaves the mapping on the old one: Check is content.
func TestReplacedByRenameIsNotTruncated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.rawpk")
	require.NoError(t, Write(path, testKey(t)))
	k, err := Open(path)
	require.NoError(t, err)
	defer k.Close()
	require.NoError(t, os.WriteFile(path+".new", []byte("short"), 0o644))
	require.NoError(t, os.Rename(path+".new", path))
	assert.NoError(t, k.Check())
	assert.NoError(t, k.Verify())
}
