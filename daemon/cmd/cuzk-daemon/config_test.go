package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOptionsMergeFileEnvironmentAndFlags(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "d.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("queue_size: 7\nhost_job_budget: 1000\ndev_keys_in_memory: true\nsynthesizers: 3\n"), 0o600))
	o, err := loadOptions([]string{"-config", cfg, "-synthesizers", "5", "-memory-limit", "123456"},
		[]string{"CUZK_DAEMON_QUEUE_SIZE=9", "CUZK_DAEMON_DRAIN_TIMEOUT=3s", "OTHER=1"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 9, o.QueueSize, "a variable overrides the file")
	assert.Equal(t, 5, o.Synthesizers, "a flag overrides the file")
	assert.Equal(t, int64(1000), o.HostJobBudget, "the file overrides the default")
	assert.True(t, o.DevKeysInMemory)
	assert.Equal(t, int64(123456), o.MemoryLimit)
	assert.Equal(t, 3*time.Second, o.DrainTimeout)
}

func TestOptionsRejectUnknownNames(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "d.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("queue_sise: 7\n"), 0o600))
	_, err := loadOptions([]string{"-config", cfg}, nil, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown key "queue_sise"`)
	_, err = loadOptions(nil, []string{"CUZK_DAEMON_MEMORY_LIMT=1"}, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unknown variable CUZK_DAEMON_MEMORY_LIMT")
}

// TestServeOffLoopbackWithoutTokenSaysHow: all interfaces and no token
// fails before anything starts, saying how to pass one.
func TestServeOffLoopbackWithoutTokenSaysHow(t *testing.T) {
	var errb bytes.Buffer
	code := serveCmd([]string{"-listen", ":0", "-http-listen", "", "-backend", "cpu", "-key-dir", t.TempDir()}, io.Discard, &errb)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errb.String(), "needs a bearer token")
	assert.Contains(t, errb.String(), "CUZK_DAEMON_TOKEN_FILE=FILE")
}
