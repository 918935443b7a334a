package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/daemon/assembly"
	"github.com/cuzk-dev/cuzk/internal/stats"
	"github.com/cuzk-dev/cuzk/internal/structflag"
)

func TestConfigMergesFileEnvironmentAndFlags(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "d.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("queue_size: 7\nhost_job_budget: 1000\ndev_keys_in_memory: true\nsynthesizers: 3\n"), 0o600))
	o, err := loadConfig([]string{"-config", cfg, "-synthesizers", "5", "-memory-limit", "123456"},
		[]string{"CUZK_DAEMON_QUEUE_SIZE=9", "CUZK_DAEMON_DRAIN_TIMEOUT=3s", "OTHER=1"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 9, o.QueueSize, "a variable overrides the file")
	assert.Equal(t, 5, o.Synthesizers, "a flag overrides the file")
	assert.Equal(t, stats.Bytes(1000), o.HostJobBudget, "the file overrides the default")
	assert.True(t, o.DevKeysInMemory)
	assert.Equal(t, stats.Bytes(123456), o.MemoryLimit)
	assert.Equal(t, 3*time.Second, o.DrainTimeout)
}

func TestConfigRejectsUnknownNames(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "d.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("queue_sise: 7\n"), 0o600))
	_, err := loadConfig([]string{"-config", cfg}, nil, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown key "queue_sise"`)
	_, err = loadConfig(nil, []string{"CUZK_DAEMON_MEMORY_LIMT=1"}, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unknown variable CUZK_DAEMON_MEMORY_LIMT")
}

// TestByteSizesTakeUnitsEverywhere: the budgets and limits read 64GiB in
// the file, in a variable and on the command line, and a bad size names the
// setting.
func TestByteSizesTakeUnitsEverywhere(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "d.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("host_budget: 96GiB\nkey_dir_budget: 1.5 GiB\nmax_message_bytes: 300MiB\ngpu_key_budget: 4096\n"), 0o600))
	o, err := loadConfig([]string{"-config", cfg, "-memory-limit", "100GiB"},
		[]string{"CUZK_DAEMON_HOST_JOB_BUDGET=10GB"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, stats.Bytes(96<<30), o.HostBudget, "file")
	assert.Equal(t, stats.Bytes(3<<29), o.KeyDirBudget, "file, with a fraction")
	assert.Equal(t, stats.Bytes(300<<20), o.MaxMessageBytes, "file")
	assert.Equal(t, stats.Bytes(4096), o.GPUKeyBudget, "file, a plain number")
	assert.Equal(t, stats.Bytes(10_000_000_000), o.HostJobBudget, "variable, decimal unit")
	assert.Equal(t, stats.Bytes(100<<30), o.MemoryLimit, "flag")

	_, err = loadConfig([]string{"-host-budget", "64 apples"}, nil, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "host-budget")
	_, err = loadConfig(nil, []string{"CUZK_DAEMON_GPU_KEY_BUDGET=lots"}, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "gpu_key_budget")
}

// TestFlagsAndDocsFollowTheConfigStruct: every key of assembly.Config is a
// flag with its help text, nothing else is (but -config), and docs/daemon.md
// lists exactly these keys.
func TestFlagsAndDocsFollowTheConfigStruct(t *testing.T) {
	keys, err := structflag.Keys(reflect.TypeFor[assembly.Config]())
	require.NoError(t, err)
	var out bytes.Buffer
	_, err = loadConfig([]string{"-h"}, nil, &out)
	require.ErrorIs(t, err, flag.ErrHelp)
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	c := assembly.DefaultConfig()
	fields, err := structflag.Define(fs, &c)
	require.NoError(t, err)
	require.Len(t, fields, len(keys))
	for _, f := range fields {
		assert.Contains(t, out.String(), "-"+f.Flag, "serve -h lists -%s", f.Flag)
		assert.Contains(t, out.String(), f.Help, "serve -h gives -%s its help", f.Flag)
	}

	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "daemon.md"))
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)`mapstructure` names of `assembly.Config` \\((.*?)\\)").FindSubmatch(doc)
	require.NotNil(t, m, "docs/daemon.md lists the keys of assembly.Config")
	listed := map[string]bool{}
	for _, k := range strings.Split(string(m[1]), ",") {
		listed[strings.TrimSpace(k)] = true
	}
	assert.Equal(t, keys, listed, "docs/daemon.md's key list against assembly.Config")
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
