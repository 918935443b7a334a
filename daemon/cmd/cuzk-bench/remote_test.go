package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/daemon/server"
)

// TestRemoteCommandsAgainstADaemon runs the client commands against a real
// daemon on a unix socket.
func TestRemoteCommandsAgainstADaemon(t *testing.T) {
	opts := server.DefaultOptions()
	dir := t.TempDir()
	opts.Listen, opts.HTTPListen, opts.Backend, opts.KeyDir = "unix:"+filepath.Join(dir, "d.sock"), "", "cpu", filepath.Join(dir, "keys")
	d, err := server.Start(opts, nil)
	require.NoError(t, err)
	defer d.Stop()
	ctx := context.Background()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"prove", "--addr", d.Addr(), "--circuit", "porep-synth", "--constraints", "2048", "-n", "3", "-c", "2", "-quiet"}, &out, &errb)
	require.Equal(t, exitOK, code, "stderr: %s", errb.String())
	assert.Contains(t, out.String(), "all 3 proofs verified")
	assert.Contains(t, out.String(), "latency p50")
	assert.Contains(t, out.String(), "prove/msm A")

	out.Reset()
	require.Equal(t, exitOK, run(ctx, []string{"status", "-addr", d.Addr()}, &out, &errb))
	assert.Regexp(t, `"backend":\s+"cpu"`, out.String()) // protojson varies its spacing on purpose
	assert.Contains(t, out.String(), "porep-synth/constraints=2048")

	out.Reset()
	require.Equal(t, exitOK, run(ctx, []string{"evict", "-addr", d.Addr(), "-constraints", "2048"}, &out, &errb))
	assert.Contains(t, out.String(), "KEY_TIER_COLD")
	require.Equal(t, exitOK, run(ctx, []string{"preload", "-addr", d.Addr(), "-constraints", "2048"}, &out, &errb))
	assert.Contains(t, out.String(), "KEY_TIER_WARM")

	errb.Reset()
	assert.Equal(t, exitFail, run(ctx, []string{"cancel", "-addr", d.Addr(), "nope"}, &out, &errb))
	assert.Contains(t, errb.String(), "NotFound")
	assert.Equal(t, exitUsage, run(ctx, []string{"prove", "--addr", d.Addr(), "-priority", "urgent"}, &out, &errb))
}
