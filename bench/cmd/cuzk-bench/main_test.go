package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/bench/gpubench"
	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
)

// runCmd runs the command line args and returns the exit code and outputs.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	t.Logf("cuzk-bench %s → %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
	return code, out.String(), errb.String()
}

// gpuHere reports whether a GPU with kernels is usable here.
func gpuHere(t *testing.T) bool {
	t.Helper()
	dev, err := gpubench.OpenGPU()
	if errors.Is(err, gpubench.ErrNoGPU) {
		return false
	}
	require.NoError(t, err)
	require.NoError(t, dev.Close())
	return true
}

func TestProveCPU(t *testing.T) {
	keys := t.TempDir()
	args := []string{"prove", "-constraints", "2^10", "-backend", "cpu", "-runs", "2", "-keys", keys}
	code, out, _ := runCmd(t, args...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "keys: development setup")
	assert.Contains(t, out, "phase (median of 2)")
	for _, row := range []string{"synthesis", "quotient H (7 NTTs, 2^10)", "MSM A", "MSM B     G1", "MSM B     G2",
		"MSM L‖H", "prove (groth16.Prove)", "verify (pairing check)", "total (synthesis + prove)"} {
		assert.Regexp(t, regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(row)+`.*\d ms$`), out, "row %q", row)
	}
	assert.Contains(t, out, "cpu: 3 of 3 proofs verified")
	assert.NotContains(t, out, "gpu")
	pks, err := filepath.Glob(filepath.Join(keys, "porep-synth-1024-setup1-*.pk"))
	require.NoError(t, err)
	require.Len(t, pks, 1, "one key pair, named by size, setup seed and shape")
	assert.FileExists(t, strings.TrimSuffix(pks[0], ".pk")+".vk")

	// The second run loads the cached keys instead of running the setup.
	code, out, _ = runCmd(t, args...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "keys: loaded "+pks[0])
	assert.NotContains(t, out, "development setup")
	assert.Contains(t, out, "cpu: 3 of 3 proofs verified")
}

// GPU proofs, with h kept on the GPU (the fused quotient and L‖H call) or
// sent through the host, verify and equal the CPU proofs byte for byte.
func TestProveGPU(t *testing.T) {
	keys := t.TempDir()
	for _, fuse := range []bool{true, false} {
		t.Run(fmt.Sprintf("h-on-device=%v", fuse), func(t *testing.T) {
			code, out, errOut := runCmd(t, "prove", "-constraints", "2^10", "-runs", "2", "-keys", keys,
				fmt.Sprintf("-h-on-device=%v", fuse))
			if !gpuHere(t) {
				assert.Equal(t, exitNoGPU, code, "gpu asked, none here")
				assert.Contains(t, errOut, "no GPU")
				assert.Regexp(t, `(?m)^MSM A .*ms\s+no GPU$`, out)
				assert.Contains(t, out, "cpu: 3 of 3 proofs verified")
				t.Skip("no GPU here: checked exit status 3 and the \"no GPU\" column; GPU proofs not run")
			}
			require.Equal(t, exitOK, code, errOut)
			assert.Contains(t, out, "gpu: 3 of 3 proofs verified")
			assert.Contains(t, out, "gpu proof == cpu proof byte for byte (same r, s per run): 3 of 3")
			assert.Contains(t, out, "gpu: overlapped proof == timed proof byte for byte (same r, s): 2 of 2")
			assert.Contains(t, out, "speed-up")
			if fuse {
				assert.Regexp(t, `(?m)^MSM L‖H .* h on GPU\s+-\s+\S+ ms\s+-$`, out, "fused on the GPU only")
				assert.Regexp(t, `(?m)^MSM L‖H   G1 \d+\s+\S+ ms\s+-\s+-$`, out, "the CPU's L‖H, none apart on the GPU")
				assert.Regexp(t, `(?m)^quotient H .*ms\s+\S+ ms\s+\S+x$`, out, "the GPU's quotient part timed")
			} else {
				assert.NotContains(t, out, "h on GPU")
			}
		})
	}
}

func TestKernelsGPU(t *testing.T) {
	code, out, errOut := runCmd(t, "kernels", "-g1", "2^10,2^17", "-g2", "2^10,2^17", "-ntt", "2^10,2^16",
		"-runs", "2", "-tile", "2^8", "-direct-check", "2^10")
	if !gpuHere(t) {
		assert.Equal(t, exitNoGPU, code)
		assert.Contains(t, errOut, "no GPU")
		t.Skip("no GPU here: checked exit status 3; kernels not run")
	}
	require.Equal(t, exitOK, code)
	assert.Equal(t, 6, strings.Count(out, "ok: "), "every size checked")
	assert.Contains(t, out, "folded to 2^8")
	assert.NotContains(t, out, "MISMATCH")
}

// TestKernelsStreamedBatchGPU runs a streamed G1 MSM alone and as a batch
// of three vectors over the same bases (each chunk sent once), every
// vector checked against gnark-crypto.
func TestKernelsStreamedBatchGPU(t *testing.T) {
	code, out, errOut := runCmd(t, "kernels", "-g1", "", "-g2", "", "-ntt", "", "-g1-streamed", "2^14",
		"-stream-chunk", "2^12", "-batch", "3", "-runs", "2", "-tile", "2^8", "-direct-check", "2^10")
	if !gpuHere(t) {
		assert.Equal(t, exitNoGPU, code)
		assert.Contains(t, errOut, "no GPU")
		t.Skip("no GPU here: checked exit status 3; kernels not run")
	}
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "MSM G1 streamed, batch of 3")
	assert.Contains(t, out, "ok: 3 vectors")
	assert.Equal(t, 2, strings.Count(out, "ok: "), "the streamed row and the batch's")
	assert.NotContains(t, out, "MISMATCH")
}

// TestKernelsTablesGPU runs the MSMs with tables of base multiples: each
// size builds its own and checks against gnark-crypto.
func TestKernelsTablesGPU(t *testing.T) {
	code, out, errOut := runCmd(t, "kernels", "-g1", "2^10,2^17", "-g2", "2^10", "-ntt", "",
		"-runs", "2", "-tile", "2^8", "-direct-check", "2^10", "-msm-tables", "1")
	if !gpuHere(t) {
		assert.Equal(t, exitNoGPU, code)
		assert.Contains(t, errOut, "no GPU")
		t.Skip("no GPU here: checked exit status 3; kernels not run")
	}
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, 3, strings.Count(out, "ok: "), "every size checked")
	assert.NotContains(t, out, "MISMATCH")
	assert.Regexp(t, `MSM G1 +2\^17 +1[0-9] +1[0-9] `, out, "2^17 with a table: c and copies")
}

// Each choice of pinned vectors (staged or direct transfers), with h kept on
// the GPU or sent through the host, gives checked results.
func TestPartitionGPU(t *testing.T) {
	for _, tc := range []struct {
		pin  string
		fuse bool
	}{{"none", false}, {"scalars", false}, {"scalars", true}, {"all", true}} {
		t.Run(fmt.Sprintf("%s/h-on-device=%v", tc.pin, tc.fuse), func(t *testing.T) {
			code, out, errOut := runCmd(t, "partition", "-log", "14", "-runs", "1", "-tile", "2^8", "-pinned", tc.pin,
				fmt.Sprintf("-h-on-device=%v", tc.fuse))
			if !gpuHere(t) {
				assert.Equal(t, exitNoGPU, code)
				assert.Contains(t, errOut, "no GPU")
				t.Skip("no GPU here: checked exit status 3; partition not run")
			}
			require.Equal(t, exitOK, code, errOut)
			assert.Contains(t, out, "device total")
			assert.Contains(t, out, "pinned: "+tc.pin)
			checks := 5 // the quotient and four MSMs
			if tc.fuse {
				checks++ // and the fused L‖H against the host path's
				assert.Contains(t, out, "h on GPU")
			}
			assert.Equal(t, checks, strings.Count(out, "ok: "), "every result checked")
			assert.Contains(t, out, "total GPU work")
		})
	}
}

func TestSynth(t *testing.T) {
	code, out, _ := runCmd(t, "synth", "-constraints", "4133", "-runs", "2", "-workers", "3")
	require.Equal(t, exitOK, code)
	for _, want := range []string{"porep-synth 4133: 4127 constraints", "sequential        1", "parallel          3",
		"witness: ", "parallel = sequential"} {
		assert.Contains(t, out, want)
	}
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{nil, exitUsage, "usage: cuzk-bench"},
		{[]string{"frobnicate"}, exitUsage, "unknown command"},
		{[]string{"help"}, exitOK, "commands:"},
		{[]string{"prove", "-help"}, exitOK, "-constraints"},
		{[]string{"kernels", "-help"}, exitOK, "-direct-check"},
		{[]string{"partition", "-help"}, exitOK, "-wires"},
		{[]string{"prove", "-backend", "tpu"}, exitUsage, "unknown backend"},
		{[]string{"prove", "-constraints", "2^x"}, exitUsage, "want 2^k"},
		{[]string{"prove", "-runs", "0", "-backend", "cpu"}, exitUsage, "-runs 0"},
		{[]string{"kernels", "-ntt", "2^28"}, exitUsage, "2^28: want 2^1 … 2^27"},
		{[]string{"kernels", "-g1", "1000"}, exitUsage, "power of two"},
		{[]string{"kernels", "-msm-tables", "-1"}, exitUsage, "-msm-tables -1: want 0"},
		{[]string{"kernels", "-batch", "0"}, exitUsage, "-batch 0: want 1 … 16"},
		{[]string{"partition", "-log", "28"}, exitUsage, "-log 28"},
		{[]string{"partition", "-b-frac", "2"}, exitUsage, "-b-frac"},
		{[]string{"partition", "-pinned", "most"}, exitUsage, `-pinned "most": want one of none, scalars, all`},
		{[]string{"prove", "extra"}, exitUsage, "unexpected arguments"},
		{[]string{"synth", "-help"}, exitOK, "-sequential"},
		{[]string{"synth", "-workers", "1"}, exitUsage, "-workers 1: want at least 2"},
		{[]string{"synth", "-runs", "0"}, exitUsage, "-runs 0"},
		{[]string{"keys", "-help"}, exitOK, "-check"},
		{[]string{"keys", "-log", "28"}, exitUsage, "-log 28: want 4 … 27"},
		{[]string{"keys", "-log", "10", "-check"}, exitOK, "key bytes SAME"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := runCmd(t, tc.args...)
			assert.Equal(t, tc.code, code)
			assert.Contains(t, out+errOut, tc.msg)
		})
	}
}

// TestDamagedKeyIsReplaced checks that the prove command reports a damaged
// cached key and replaces it (the cache's own cases are devkeys' tests).
func TestDamagedKeyIsReplaced(t *testing.T) {
	dir := t.TempDir()
	c, err := porep.New(1<<10, 1)
	require.NoError(t, err)
	_, _, info, err := gpubench.DevKeys(dir, c, 5)
	require.NoError(t, err)
	require.NotEmpty(t, info.PKPath)
	require.NoError(t, os.WriteFile(info.PKPath, []byte("not a key"), 0o644))
	pk, _, info, err := gpubench.DevKeys(dir, c, 5)
	require.NoError(t, err)
	var out bytes.Buffer
	printKeyInfo(&out, info, pk)
	assert.Contains(t, out.String(), "keys: cached key not used (")
	assert.Contains(t, out.String(), "keys: stored "+info.PKPath)
	pk, _, info, err = gpubench.DevKeys(dir, c, 5)
	require.NoError(t, err)
	out.Reset()
	printKeyInfo(&out, info, pk)
	assert.Contains(t, out.String(), "keys: loaded "+info.PKPath, "the rewritten file loads")
}

func TestParseOrdinals(t *testing.T) {
	got, err := parseOrdinals("")
	require.NoError(t, err)
	assert.Nil(t, got, "all GPUs")
	got, err = parseOrdinals("0, 1")
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1}, got)
	_, err = parseOrdinals("0,x")
	assert.ErrorContains(t, err, `-gpus: "x" is not a GPU ordinal`)
	_, err = parseOrdinals("-1")
	assert.Error(t, err)
}
