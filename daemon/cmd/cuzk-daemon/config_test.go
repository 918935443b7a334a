package main

import (
	"bytes"
	"flag"
	"fmt"
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
	require.NoError(t, os.WriteFile(cfg, []byte("queue_size: 7\nhost_job_budget: 1000B\ndev_keys_in_memory: true\nsynthesizers: 3\n"), 0o600))
	o, err := loadConfig([]string{"-config", cfg, "-synthesizers", "5", "-memory-limit", "123456KiB"},
		[]string{"CUZK_DAEMON_QUEUE_SIZE=9", "CUZK_DAEMON_DRAIN_TIMEOUT=3s", "OTHER=1"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 9, o.QueueSize, "a variable overrides the file")
	assert.Equal(t, 5, o.Synthesizers, "a flag overrides the file")
	assert.Equal(t, stats.Bytes(1000), o.HostJobBudget, "the file overrides the default")
	assert.True(t, o.DevKeysInMemory)
	assert.Equal(t, stats.Bytes(123456<<10), o.MemoryLimit)
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
	require.NoError(t, os.WriteFile(cfg, []byte("host_budget: 96GiB\nkey_dir_budget: 1.5 GiB\nmax_message_bytes: 300MiB\ngpu_key_budget: 4096B\n"), 0o600))
	o, err := loadConfig([]string{"-config", cfg, "-memory-limit", "100GiB"},
		[]string{"CUZK_DAEMON_HOST_JOB_BUDGET=10GB"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, stats.Bytes(96<<30), o.HostBudget, "file")
	assert.Equal(t, stats.Bytes(3<<29), o.KeyDirBudget, "file, with a fraction")
	assert.Equal(t, stats.Bytes(300<<20), o.MaxMessageBytes, "file")
	assert.Equal(t, stats.Bytes(4096), o.GPUKeyBudget, "file, in bytes")
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

// TestConfigSettingsAreCheckedWhereverWritten: a file, a variable and a
// flag share one parser and one check; a message limit that cannot carry a
// request, a duration or a size without a unit, a size too large for an
// int64 and a negative duration are refused at start, each naming the key
// and the value.
func TestConfigSettingsAreCheckedWhereverWritten(t *testing.T) {
	dir, n := t.TempDir(), 0
	file := func(body string) string {
		n++
		p := filepath.Join(dir, fmt.Sprintf("d%d.yaml", n))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want []string // in the error
	}{
		{"message limit 0 in the file", []string{"-config", file("max_message_bytes: 0\n")}, nil, []string{"max_message_bytes: 0 bytes", "below the floor"}},
		{"message limit 32KiB in a variable", nil, []string{"CUZK_DAEMON_MAX_MESSAGE_BYTES=32KiB"}, []string{"max_message_bytes: 32768 bytes", "below the floor"}},
		{"message limit 65537B as a flag", []string{"-max-message-bytes", "65537B"}, nil, []string{"max_message_bytes: 65537 bytes", "below the floor"}},
		{"message limit -1 in YAML", []string{"-config", file("max_message_bytes: -1\n")}, nil, []string{"max_message_bytes", `"-1"`}},
		{"message limit 3GiB", []string{"-max-message-bytes", "3GiB"}, nil, []string{"max_message_bytes", "above the ceiling"}},
		{"drain_timeout 600 in the file", []string{"-config", file("drain_timeout: 600\n")}, nil, []string{"drain_timeout", `"600"`, "missing unit"}},
		{"drain_timeout 600 in a variable", nil, []string{"CUZK_DAEMON_DRAIN_TIMEOUT=600"}, []string{"DRAIN_TIMEOUT", "drain_timeout", "missing unit"}},
		{"negative drain_timeout", []string{"-config", file("drain_timeout: -5s\n")}, nil, []string{"drain_timeout: -5s", "positive"}},
		{"host_budget 0.5 in the file", []string{"-config", file("host_budget: 0.5\n")}, nil, []string{"host_budget", `"0.5"`, "needs a unit"}},
		{"host_budget 1e30 in the file", []string{"-config", file("host_budget: 1e30\n")}, nil, []string{"host_budget", "more than an int64 holds"}},
		{"host_budget 64 as a flag", []string{"-host-budget", "64"}, nil, []string{"host-budget", `"64"`, "needs a unit"}},
		{"memory_limit 64 in a variable", nil, []string{"CUZK_DAEMON_MEMORY_LIMIT=64"}, []string{"memory_limit", "needs a unit"}},
		{"memory_limit 64B", []string{"-memory-limit", "64B"}, nil, []string{"memory_limit: 64 bytes", "below the floor"}},
		{"negative queue", []string{"-queue-size", "-3"}, nil, []string{"queue_size: -3"}},
		{"negative handoff in TOML", []string{"-config", tomlFile(t, "handoff = -1\n")}, nil, []string{"handoff: -1", "negative"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfig(tc.args, tc.env, io.Discard)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			if tc.env != nil {
				return // serve reads the process's environment
			}
			var errb bytes.Buffer
			code := serveCmd(append(tc.args, "-listen", "unix:"+filepath.Join(t.TempDir(), "s"), "-http-listen", "", "-backend", "cpu"), io.Discard, &errb)
			assert.Equal(t, exitUsage, code, "serve refuses it before starting: %s", errb.String())
		})
	}
}

func tomlFile(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "d.toml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}
