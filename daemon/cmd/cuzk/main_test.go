package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/cuzk-dev/cuzk/daemon/assembly"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/daemon/client"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
)

// cuzk runs the command line and returns its exit code, stdout and stderr.
func cuzk(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestHelpOnEveryCommand(t *testing.T) {
	for _, c := range commands {
		for _, args := range [][]string{{c.name, "-h"}, {c.name, "--help"}, {c.name, "-help"}, {c.name, "help"}, {"help", c.name}} {
			code, out, errs := cuzk(t, args...)
			assert.Equal(t, exitOK, code, "%v: %s", args, errs)
			assert.Contains(t, out, "usage: cuzk "+c.name, args)
			assert.Contains(t, out, "-o string", "%v: every command has -o", args)
			assert.Equal(t, c.daemon, strings.Contains(out, "-addr"), "%v: daemon commands take -addr", args)
			assert.Empty(t, errs, args)
		}
	}
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		code, out, _ := cuzk(t, args...)
		assert.Equal(t, exitOK, code)
		for _, c := range commands {
			assert.Contains(t, out, "\n  "+c.name+" ", "the command list names %s", c.name)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		nil, {"frobnicate"}, {"help", "frobnicate"}, {"status", "-nope"}, {"status", "-o", "yaml"}, {"status", "extra"},
		{"await"}, {"await", "a", "b"}, {"cancel"}, {"prove", "-priority", "urgent"}, {"prove", "-n", "0"},
		{"preload", "-tier", "lukewarm"}, {"prove", "-constraints", "2^x"}, {"status", "-max-message", "64G"},
		{"submit", "-circuit", "nope"}, {"status", "-timeout", "-1s"}, {"prove", "-timeout=-5m"},
	} {
		code, _, errs := cuzk(t, args...)
		assert.Equal(t, exitUsage, code, "%v", args)
		assert.NotEmpty(t, errs, "%v says why on stderr", args)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version", "-o", "json"}, {"version", "-json"}, {"--version", "-o", "json"}} {
		code, out, _ := cuzk(t, args...)
		require.Equal(t, exitOK, code, args)
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		assert.Contains(t, v, "version")
		assert.Contains(t, v, "commit")
	}
	code, out, _ := cuzk(t, "version")
	assert.Equal(t, exitOK, code)
	assert.True(t, strings.HasPrefix(out, "cuzk "), out)
}

// daemon starts a daemon (CPU backend) on a unix socket in dir and returns
// the flags that reach it, and with them a porep-synth circuit of 2^11.
func daemon(t *testing.T, dir string) (addr, porep []string) {
	t.Helper()
	return daemonWith(t, dir, func(*assembly.Config) {})
}

// daemonWith is daemon with its configuration changed by set first.
func daemonWith(t *testing.T, dir string, set func(*assembly.Config)) (addr, porep []string) {
	t.Helper()
	opts := assembly.DefaultConfig()
	opts.Listen, opts.HTTPListen, opts.Backend, opts.KeyDir = "unix:"+filepath.Join(dir, "d.sock"), "", "cpu", filepath.Join(dir, "keys")
	set(&opts)
	d, err := assembly.Start(opts, nil)
	require.NoError(t, err)
	t.Cleanup(d.Stop)
	addr = []string{"-addr", d.Addr(), "-max-message", "64MiB"}
	return addr, append(addr, "-circuit", "porep-synth", "-constraints", "2^11")
}

func TestProveAgainstADaemon(t *testing.T) {
	_, porep := daemon(t, t.TempDir())
	code, out, errs := cuzk(t, append([]string{"prove", "-n", "3", "-c", "2", "-quiet"}, porep...)...)
	require.Equal(t, exitOK, code, "stderr: %s", errs)
	assert.Contains(t, out, "all 3 proofs verified")
	assert.Regexp(t, `proof 0: job \S+ on cpu in`, out, "every proof's job id")
	assert.Contains(t, out, "latency p50")
	assert.Contains(t, out, "prove/msm A")

	code, out, errs = cuzk(t, append([]string{"prove", "-o", "json"}, porep...)...)
	require.Equal(t, exitOK, code, "stderr: %s", errs)
	var s client.Summary
	require.NoError(t, json.Unmarshal([]byte(out), &s), out)
	require.Len(t, s.Proofs, 1)
	assert.NotEmpty(t, s.Proofs[0].JobID)
	assert.Positive(t, s.Latency("p50"))
}

func TestJobCommandsAgainstADaemon(t *testing.T) {
	dir := t.TempDir()
	addr, porep := daemon(t, dir)
	code, out, errs := cuzk(t, append([]string{"submit", "-seed", "9"}, porep...)...)
	require.Equal(t, exitOK, code, "stderr: %s", errs)
	job := strings.TrimSpace(out)
	require.NotEmpty(t, job)
	assert.NotContains(t, job, " ", "submit prints the job id alone")

	proof := filepath.Join(dir, "proof")
	code, out, errs = cuzk(t, append([]string{"await", "-proof", proof}, append(addr, job)...)...)
	require.Equal(t, exitOK, code, "stderr: %s", errs)
	assert.Contains(t, out, "job "+job+" done on cpu: verified true")
	b, err := os.ReadFile(proof)
	require.NoError(t, err)
	assert.Len(t, b, 192, "A||B||C compressed")

	code, out, _ = cuzk(t, append([]string{"await", "-o", "json"}, append(addr, job)...)...)
	require.Equal(t, exitOK, code)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	assert.Equal(t, "done", res["state"])
	assert.IsType(t, float64(0), res["timings"].(map[string]any)["total_ns"], "int64s are numbers")

	code, out, errs = cuzk(t, append([]string{"watch"}, append(addr, job)...)...)
	require.Equal(t, exitOK, code, "stderr: %s", errs)
	assert.Contains(t, out, "done")

	code, _, errs = cuzk(t, append([]string{"cancel"}, append(addr, "nope")...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, "NotFound")
	code, out, _ = cuzk(t, append([]string{"cancel", "-o", "json"}, append(addr, job)...)...)
	assert.Equal(t, exitOK, code)
	assert.JSONEq(t, `[{"job_id":"`+job+`","state":"done"}]`, out, "an ended job stays as it was")
}

func TestStatusAndKeysAgainstADaemon(t *testing.T) {
	dir := t.TempDir()
	addr, porep := daemon(t, dir)
	code, out, _ := cuzk(t, append([]string{"preload"}, porep...)...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "porep-synth/constraints=2048 warm")

	code, out, _ = cuzk(t, append([]string{"status"}, addr...)...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "backend cpu")
	assert.Contains(t, out, "porep-synth/constraints=2048")
	code, out, _ = cuzk(t, append([]string{"status", "-o", "json"}, addr...)...)
	require.Equal(t, exitOK, code)
	var st map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &st), out)
	assert.Equal(t, "cpu", st["backend"])
	assert.IsType(t, float64(0), st["uptime_ns"], "int64s are numbers")

	code, out, _ = cuzk(t, append([]string{"evict", "-o", "json"}, porep...)...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, `"tier": "cold"`)

	vk := filepath.Join(dir, "vk")
	code, out, _ = cuzk(t, append([]string{"vk", "-out", vk}, porep...)...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "verifying key")
	code, out, _ = cuzk(t, append([]string{"vk", "-o", "json"}, porep...)...)
	require.Equal(t, exitOK, code)
	var v struct {
		Binary  string         `json:"binary"`
		Snarkjs map[string]any `json:"snarkjs"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	assert.NotEmpty(t, v.Snarkjs)
	b, err := os.ReadFile(vk)
	require.NoError(t, err)
	assert.Equal(t, len(b)*2, len(v.Binary))
}

// TestFlagsAnywhere: flags after the arguments, and before the command's
// name, as kubectl and gh take them.
func TestFlagsAnywhere(t *testing.T) {
	dir := t.TempDir()
	addr, porep := daemon(t, dir)
	code, out, errs := cuzk(t, append([]string{"submit"}, porep...)...)
	require.Equal(t, exitOK, code, "stderr: %s", errs)
	job := strings.TrimSpace(out)

	code, out, errs = cuzk(t, append([]string{"await", job, "-o", "json"}, addr...)...)
	require.Equal(t, exitOK, code, "stderr: %s", errs)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	assert.Equal(t, "done", res["state"])

	code, out, errs = cuzk(t, append(append([]string{}, addr...), "status", "-o", "json")...)
	require.Equal(t, exitOK, code, "stderr: %s", errs)
	assert.Contains(t, out, `"backend": "cpu"`)
}

// TestErrorsSayWhatToDoNext: a daemon that is not there, or that wants a
// token the client did not send, gets a sentence naming the address, the
// variable and the command, never the token.
func TestErrorsSayWhatToDoNext(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CUZK_DAEMON_TOKEN", "")
	none := "unix:" + filepath.Join(dir, "none.sock")
	code, _, errs := cuzk(t, "status", "-addr", none)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, "no daemon answers at "+none)
	assert.Contains(t, errs, `start one with "cuzk-daemon serve"`)
	assert.Contains(t, errs, "$CUZK_ADDR")

	const token = "the-daemons-token-0123456789"
	addr, _ := daemonWith(t, dir, func(c *assembly.Config) { c.Token = token })
	code, _, errs = cuzk(t, append([]string{"status"}, addr...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, "wants a bearer token: set $CUZK_DAEMON_TOKEN (or -token)")
	code, _, errs = cuzk(t, append([]string{"status", "-token", "wrong-token"}, addr...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, "refused the token")
	assert.NotContains(t, errs, "wrong-token")
	t.Setenv("CUZK_DAEMON_TOKEN", token)
	code, out, errs := cuzk(t, append([]string{"status", "-o", "json"}, addr...)...)
	require.Equal(t, exitOK, code, "stderr: %s", errs)
	assert.NotContains(t, out+errs, token)

	code, _, errs = cuzk(t, append([]string{"await", "no-such-job"}, addr...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, "does not know this job")
}

// TestCircuitsListsEveryParameterAndItsExampleProves: "cuzk circuits"
// names every circuit of the registry with each parameter's flag, range
// and default, and each example it prints proves and verifies against a
// daemon.
func TestCircuitsListsEveryParameterAndItsExampleProves(t *testing.T) {
	code, out, errs := cuzk(t, "circuits", "-o", "json")
	require.Equal(t, exitOK, code, errs)
	var infos []circuitInfo
	require.NoError(t, json.Unmarshal([]byte(out), &infos), out)
	reg := registry.Default()
	require.Len(t, infos, len(reg.IDs()))
	for i, d := range reg.Definitions() {
		assert.Equal(t, d.ID, infos[i].ID)
		require.Len(t, infos[i].Params, len(d.Params), d.ID)
		for j, p := range d.Params {
			got := infos[i].Params[j]
			assert.Equal(t, circuitParam{Name: p.Name, Flag: "-" + p.Name, Type: "integer (2^k or decimal)", Min: p.Min, Max: p.Max,
				Default: p.Default, Doc: p.Doc}, got)
		}
	}
	code, text, _ := cuzk(t, "circuits")
	require.Equal(t, exitOK, code)
	addr, _ := daemon(t, t.TempDir())
	for _, c := range infos {
		assert.Contains(t, text, "  "+c.Example+"\n", "the text lists the example")
		args := strings.Fields(c.Example)
		require.Equal(t, []string{"cuzk", "prove"}, args[:2])
		code, out, errs := cuzk(t, append(append(args[1:], addr...), "-o", "json")...)
		require.Equal(t, exitOK, code, "%s: %s", c.Example, errs)
		var s client.Summary
		require.NoError(t, json.Unmarshal([]byte(out), &s), out)
		assert.Len(t, s.Proofs, 1, c.Example)
		assert.Empty(t, s.Failures, c.Example)
	}
}

// TestCircuitParameterErrorsNameTheFlag: each problem names the flag to
// pass and its range, all of them at once.
func TestCircuitParameterErrorsNameTheFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-circuit", "sha256", "-bytes", "0"}, []string{"-bytes 0: sha256's message length must be in 1..2^16, e.g. -bytes 64"}},
		{[]string{"-constraints", "100"}, []string{"-constraints 100: porep-synth's target constraint count must be in 2^10..2^27"}},
		{[]string{"-circuit", "sha256", "-depth", "3", "-constraints", "2^12"}, []string{
			"-constraints: sha256 takes no constraints (its parameters: -bytes)", "-depth: sha256 takes no depth (its parameters: -bytes)"}},
		{[]string{"-circuit", "poseidon-merkle", "-param", "depth=40"}, []string{"-depth 40: poseidon-merkle's levels of the arity-8 tree must be in 1..16"}},
		{[]string{"-circuit", "sha"}, []string{`-circuit "sha": no such circuit; "cuzk circuits" lists them`}},
		{[]string{"-bytes", "x", "-circuit", "sha256"}, []string{`-bytes "x": want 2^k or an integer`}},
	} {
		for _, cmd := range []string{"prove", "submit", "preload", "evict", "vk"} {
			code, _, errs := cuzk(t, append([]string{cmd}, tc.args...)...)
			assert.Equal(t, exitUsage, code, "%s %v", cmd, tc.args)
			for _, w := range tc.want {
				assert.Contains(t, errs, w, "%s %v", cmd, tc.args)
			}
		}
	}
}

// TestProveOneShowsItsSteps: one proof on one daemon reports on stderr
// what it waits for: the verifying key (made first by a daemon without
// one), then its job's events from Watch, up to done; -quiet and -o json
// report nothing.
func TestProveOneShowsItsSteps(t *testing.T) {
	_, porep := daemon(t, t.TempDir())
	code, out, errs := cuzk(t, append([]string{"prove"}, porep...)...)
	require.Equal(t, exitOK, code, "stderr: %s", errs)
	t.Logf("stderr:\n%s", errs)
	assert.Contains(t, out, "all 1 proofs verified")
	assert.Contains(t, errs, "prove: fetching the verifying key of porep-synth/constraints=2048 (a daemon without the key makes a development key first)\n")
	job := regexp.MustCompile(`job (\S+): `).FindStringSubmatch(errs)
	require.NotNil(t, job, errs)
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	var kinds []string
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "job "+job[1]+": "); ok {
			kinds = append(kinds, strings.Fields(rest)[1])
		}
	}
	for _, k := range []string{"queued", "key_ready", "synthesis_done", "proving", "done"} {
		assert.Contains(t, kinds, k, "the job's events: %s", errs)
	}
	assert.Equal(t, "done", kinds[len(kinds)-1], "the last event is the end")
	assert.Contains(t, out, "proof 0: job "+job[1]+" on cpu", "the watched job is the proof's")

	for _, quiet := range [][]string{{"-quiet"}, {"-o", "json"}} {
		code, _, errs = cuzk(t, append(append([]string{"prove"}, quiet...), porep...)...)
		require.Equal(t, exitOK, code, "stderr: %s", errs)
		assert.Empty(t, errs, "%v: nothing on stderr", quiet)
	}
}

// TestWatchSaysTheDaemonWentAway: a daemon killed under a running job (as
// `podman rm -f` does after its grace period) leaves "cuzk watch" with a
// sentence saying so, not a bare transport error.
func TestWatchSaysTheDaemonWentAway(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and kills a cuzk-daemon")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "cuzk-daemon")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/cuzk-dev/cuzk/daemon/cmd/cuzk-daemon").CombinedOutput()
	require.NoError(t, err, "%s", out)
	sock := "unix:" + filepath.Join(dir, "d.sock")
	d := exec.Command(bin, "serve", "-backend", "cpu", "-listen", sock, "-http-listen", "", "-key-dir", filepath.Join(dir, "keys"))
	require.NoError(t, d.Start())
	t.Cleanup(func() { _ = d.Process.Kill(); _ = d.Wait() })
	addr := []string{"-addr", sock}
	require.Eventually(t, func() bool { code, _, _ := cuzk(t, append([]string{"status"}, addr...)...); return code == exitOK },
		30*time.Second, 100*time.Millisecond, "the daemon serves")

	// A key this size takes the daemon seconds to make: the job is running
	// when the daemon dies.
	code, job, errs := cuzk(t, append([]string{"submit", "-constraints", "2^17"}, addr...)...)
	require.Equal(t, exitOK, code, errs)
	type result struct {
		code      int
		out, errs string
	}
	done := make(chan result, 1)
	go func() {
		var o, e bytes.Buffer
		c := run(context.Background(), append([]string{"watch", strings.TrimSpace(job)}, addr...), &o, &e)
		done <- result{c, o.String(), e.String()}
	}()
	time.Sleep(time.Second)
	require.NoError(t, d.Process.Signal(syscall.SIGKILL))
	select {
	case r := <-done:
		t.Logf("watch: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.out, r.errs)
		assert.Equal(t, exitFail, r.code)
		assert.Contains(t, r.errs, "the connection to the daemon at "+sock+" closed: the daemon stopped or restarted")
	case <-time.After(time.Minute):
		t.Fatal("watch did not end after the daemon died")
	}
}
