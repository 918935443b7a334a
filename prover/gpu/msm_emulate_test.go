package gpu

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/internal/testseed"
)

// emulate runs the emulator on (scalars, raw bases: p.stride points, the
// table's copy 0) with plan p, in chunks of chunk points with their buckets
// carried (0: one pass), and returns the window sums' bytes.
func emulate(t *testing.T, bin string, curve uint32, p msmPlan, chunk int, scalars []fr.Element, bases []byte) []byte {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	hdr := []uint32{curve, p.n, p.c, p.nwin, p.mwin, p.stride, p.copies(), p.t1, p.t2, p.tw, p.k, uint32(chunk)}
	buf := append(driver.Bytes(hdr), driver.Bytes(scalars)...)
	require.NoError(t, os.WriteFile(in, append(buf, bases...), 0o600))
	msg, err := exec.Command(bin, in, out).CombinedOutput()
	require.NoError(t, err, "emulator: %s", msg)
	res, err := os.ReadFile(out)
	require.NoError(t, err)
	return res
}

// TestMSMKernelsOnHost runs the MSM kernels' code on the CPU (see
// testdata/msm_emulate.cc) and checks the combined result against
// gnark-crypto, so the device arithmetic and pipeline are checked on every
// machine with a C++ compiler, GPU or not. Cases with copies > 1 build a
// table of multiples first (msm_table.cuh) and fold the windows into
// fewer bucket windows; with extra > 0 the bases have extra points beyond
// the scalars, so the table's stride is not n. Cases with chunk > 0 run as a
// chunked MSM does (msmChunked): chunk after chunk over the bases in place,
// the buckets carried by bucket_fold and weighted once.
func TestMSMKernelsOnHost(t *testing.T) {
	bin := buildHostKernels(t, "msm_emulate")
	seed := testseed.Seed(t)
	rng := newTestRand(seed)
	for _, tc := range []struct {
		n       int
		scalars string
		bases   string
		g2      bool
		c       uint32 // window bits, 0: the plan's choice
		copies  uint32 // most table copies (0: no table)
		extra   int    // bases beyond n
		chunk   int    // points a chunk (0: one pass)
	}{
		{n: 1, scalars: "random", bases: "random"}, {n: 2, scalars: "random", bases: "random"},
		{n: 3, scalars: "random", bases: "random"}, {n: 255, scalars: "random", bases: "random"},
		{n: 4097, scalars: "random", bases: "random"},
		// A 3-bit top window: its long buckets alone go through reduce
		// levels, the other windows' buckets reach bucket_sum as accumulate
		// left them.
		{n: 9000, scalars: "random", bases: "random", c: 12},
		{n: 300, scalars: "one", bases: "random"}, {n: 300, scalars: "small", bases: "repeated"},
		// One bucket of 20000 entries: three reduce levels, the second
		// writing into the partials the first read (its task numbers and
		// offsets from a word on the device), the third reading them there.
		{n: 20000, scalars: "one", bases: "random"}, {n: 5000, scalars: "one", bases: "random", g2: true},
		{n: 200, scalars: "minus-one", bases: "negated"}, {n: 100, scalars: "sparse", bases: "infinity"},
		{n: 64, scalars: "zero", bases: "random"},
		{n: 3, scalars: "random", bases: "random", g2: true}, {n: 65, scalars: "random", bases: "random", g2: true},
		{n: 40, scalars: "small", bases: "infinity", g2: true},
		// Tables: full (one bucket window), partial (folded windows, the
		// top copy short) and over a longer bases set.
		{n: 4097, scalars: "random", bases: "random", copies: 16},
		{n: 9000, scalars: "random", bases: "random", c: 12, copies: 4},
		{n: 300, scalars: "small", bases: "repeated", copies: 16},
		{n: 200, scalars: "minus-one", bases: "negated", copies: 7},
		{n: 100, scalars: "sparse", bases: "infinity", copies: 3},
		{n: 500, scalars: "random", bases: "random", copies: 16, extra: 700},
		{n: 65, scalars: "random", bases: "random", g2: true, copies: 16},
		{n: 40, scalars: "small", bases: "infinity", g2: true, copies: 5, extra: 9},
		// Chunks with buckets carried: equal chunks, a short last one, one
		// point a chunk, the last chunk of one point, equal partials in two
		// chunks (a doubling in bucket_fold), long buckets reduced in some
		// chunks only, over a table and over longer bases, and G2.
		{n: 4096, scalars: "random", bases: "random", chunk: 1024},
		{n: 4097, scalars: "random", bases: "random", chunk: 1000},
		{n: 7, scalars: "random", bases: "random", chunk: 1},
		{n: 301, scalars: "random", bases: "random", chunk: 300},
		{n: 300, scalars: "small", bases: "repeated", chunk: 64},
		{n: 300, scalars: "one", bases: "random", chunk: 128},
		{n: 20000, scalars: "one", bases: "random", chunk: 9000},
		{n: 200, scalars: "minus-one", bases: "negated", chunk: 33},
		{n: 100, scalars: "sparse", bases: "infinity", chunk: 10},
		{n: 64, scalars: "zero", bases: "random", chunk: 16},
		{n: 9000, scalars: "random", bases: "random", c: 12, chunk: 2500},
		{n: 4097, scalars: "random", bases: "random", copies: 16, chunk: 1500},
		{n: 500, scalars: "random", bases: "random", copies: 16, extra: 700, chunk: 120},
		{n: 300, scalars: "small", bases: "repeated", copies: 16, chunk: 77},
		{n: 65, scalars: "random", bases: "random", g2: true, chunk: 20},
		{n: 40, scalars: "small", bases: "infinity", g2: true, copies: 5, extra: 9, chunk: 13},
	} {
		name := fmt.Sprintf("g2=%v/n=%d/c=%d/copies=%d/extra=%d/chunk=%d/%s/%s",
			tc.g2, tc.n, tc.c, tc.copies, tc.extra, tc.chunk, tc.scalars, tc.bases)
		stride := tc.n + tc.extra
		tab, err := newMSMTable(stride, max(1, tc.copies), tc.c)
		require.NoError(t, err)
		// A wave of 300 threads: bucket_sum runs of unequal lengths.
		p, err := newMSMPlanTable(tc.n, tab, tc.c, 300)
		require.NoError(t, err)
		if tc.copies > 1 {
			require.Greater(t, p.copies(), uint32(1), "%s: a table", name)
			require.Less(t, p.mwin, p.nwin, "%s: windows folded", name)
		}
		scalars := edgeScalars(tc.scalars, tc.n, rng)
		if tc.g2 {
			bases := randG2(stride, stride, rng)
			if tc.bases == "infinity" {
				bases[0], bases[tc.n/2] = bls12381.G2Affine{}, bls12381.G2Affine{}
			}
			raw := emulate(t, bin, 2, p, tc.chunk, scalars, driver.Bytes(bases))
			got := combineG2(unsafe.Slice((*g2XYZZ)(unsafe.Pointer(&raw[0])), p.mwin), p.c)
			var want bls12381.G2Jac
			_, err := want.MultiExp(bases[:tc.n], scalars, ecc.MultiExpConfig{})
			require.NoError(t, err)
			require.True(t, got.Equal(&want), "%s: emulated kernels differ from gnark-crypto", name)
			continue
		}
		bases := edgeBases(tc.bases, randG1(stride, stride, rng))
		raw := emulate(t, bin, 1, p, tc.chunk, scalars, driver.Bytes(bases))
		got := combineG1(unsafe.Slice((*g1XYZZ)(unsafe.Pointer(&raw[0])), p.mwin), p.c)
		var want bls12381.G1Jac
		_, err = want.MultiExp(bases[:tc.n], scalars, ecc.MultiExpConfig{})
		require.NoError(t, err)
		require.True(t, got.Equal(&want), "%s: emulated kernels differ from gnark-crypto", name)
	}
}

// TestFp2KernelOnHost runs the Fp2 self-test kernel's code on the CPU (the
// emulator's curve 3) against gnark-crypto, as TestFp2KernelMatchesGnark
// does on the GPU.
func TestFp2KernelOnHost(t *testing.T) {
	a, b := fp2SelftestInputs(4096)
	raw := selftestOnHost(t, 3, len(a), driver.Bytes(a), driver.Bytes(b))
	require.Len(t, raw, 5*len(a)*2*fp.Bytes)
	requireFp2Selftest(t, a, b, unsafe.Slice((*bls12381.E2)(unsafe.Pointer(&raw[0])), 5*len(a)))
}

// selftestOnHost runs the emulator's field self-test for curve (0: Fp, 3:
// Fp2) on n operand pairs (a, b) and returns its output.
func selftestOnHost(t *testing.T, curve uint32, n int, a, b []byte) []byte {
	t.Helper()
	bin := buildHostKernels(t, "msm_emulate")
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	hdr := make([]uint32, 12)
	hdr[0], hdr[1] = curve, uint32(n)
	buf := append(append(driver.Bytes(hdr), a...), b...)
	require.NoError(t, os.WriteFile(in, buf, 0o600))
	msg, err := exec.Command(bin, in, out).CombinedOutput()
	require.NoError(t, err, "emulator: %s", msg)
	raw, err := os.ReadFile(out)
	require.NoError(t, err)
	return raw
}

// TestFpKernelOnHost runs the Fp self-test kernel's code on the CPU (the
// emulator's curve 0) against gnark-crypto, as TestFpKernelMatchesGnark
// does on the GPU.
func TestFpKernelOnHost(t *testing.T) {
	a, b := fpSelftestInputs(4096)
	raw := selftestOnHost(t, 0, len(a), driver.Bytes(a), driver.Bytes(b))
	require.Len(t, raw, 6*len(a)*fp.Bytes)
	requireFpSelftest(t, a, b, unsafe.Slice((*fp.Element)(unsafe.Pointer(&raw[0])), 6*len(a)))
}
