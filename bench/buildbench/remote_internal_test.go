package buildbench

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSummary(t *testing.T) {
	var cb CloneBuild
	out := "kernel ntt hit remote 636e694dea41 (0.31 MB in 0.1s)\n" +
		"kernels: 10 units, 10 hits (9 remote), 0 nvcc runs, 0 uploaded, 11 files written, 2.1s\nbuild: done\n"
	require.NoError(t, cb.parseSummary(out))
	assert.Equal(t, CloneBuild{Units: 10, Hits: 10, Fetched: 9}, cb)
	assert.Error(t, cb.parseSummary("kernels: 10 units, 10 hits, 0 nvcc runs"), "the line before the remote cache")
}

func TestPathWithout(t *testing.T) {
	dir := t.TempDir()
	with, without := filepath.Join(dir, "with"), filepath.Join(dir, "without")
	for _, d := range []string{with, without} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	for _, f := range []string{filepath.Join(with, "nvcc"), filepath.Join(with, "gcc"), filepath.Join(without, "ls")} {
		require.NoError(t, os.WriteFile(f, []byte("#!/bin/sh\necho "+filepath.Base(f)+"\n"), 0o755))
	}
	path, err := PathWithout(with+":"+without, "nvcc", filepath.Join(dir, "shadow"))
	require.NoError(t, err)
	parts := strings.Split(path, ":")
	require.Len(t, parts, 2)
	assert.Equal(t, without, parts[1], "a directory without nvcc stays")
	assert.NoFileExists(t, filepath.Join(parts[0], "nvcc"))
	cmd := exec.Command("gcc")
	cmd.Env = []string{"PATH=" + path}
	cmd.Path = filepath.Join(parts[0], "gcc")
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, "gcc\n", string(out), "everything else still runs")
}

func TestRemoteChecksAndTable(t *testing.T) {
	good := RemoteResult{
		Cold:      CloneBuild{Name: "cold", Wall: 3 * time.Minute, Units: 10, Compiles: 10, Uploaded: 10},
		Warm:      CloneBuild{Name: "warm", Wall: 20 * time.Second, Units: 10, Hits: 10, Fetched: 10, Target: WarmRemoteTarget},
		NoOp:      Timing{Name: "no-op", Runs: []time.Duration{time.Second}, Target: MageNoOpTarget},
		Identical: true,
	}
	for _, c := range good.checks() {
		assert.True(t, c.Pass, c.Detail)
	}
	bad := good
	bad.Warm.Compiles, bad.Warm.Fetched, bad.Warm.Wall = 1, 9, 2*time.Minute
	bad.Identical, bad.WarmPuts, bad.NoOpRequests = false, 2, 1
	fails := 0
	for _, c := range bad.checks() {
		if !c.Pass {
			fails++
		}
	}
	assert.Equal(t, 5, fails, "compiles, wall, bytes, writes and requests each fail")

	var buf bytes.Buffer
	require.NoError(t, Result{Remote: &good}.WriteTable(&buf))
	out := buf.String()
	for _, want := range []string{"remote kernel cache", "cold", "warm", "20s", "PASS  warm remote, no nvcc: 0 nvcc runs, 10 of 10 kernels fetched"} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "ninja", "the sequence was not measured")
}
