package gpu

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/internal/testseed"
)

// fixedBaseScalars returns n random scalars with the edge values first
// (as many as fit): 0, 1, r−1, r−2, (r−1)/2, 2^(c−1) (a digit of exactly
// half the window, no carry), 2^(c−1)+1 (a carry), and the scalar whose
// every c-bit digit is 2^(c−1) (below r, reduced).
func fixedBaseScalars(n, c int, rng *rand.Rand) []fr.Element {
	s := randScalars(n, rng)
	half := new(big.Int).Lsh(big.NewInt(1), uint(c-1))
	allHalf := new(big.Int)
	for w := range fixedBaseWindows(c) {
		allHalf.Add(allHalf, new(big.Int).Lsh(half, uint(c*w)))
	}
	var edges [8]fr.Element
	edges[1].SetOne()
	edges[2].SetOne()
	edges[2].Neg(&edges[2])
	edges[3].SetUint64(2)
	edges[3].Neg(&edges[3])
	edges[4].SetBigInt(new(big.Int).Rsh(fr.Modulus(), 1))
	edges[5].SetBigInt(half)
	edges[6].SetBigInt(new(big.Int).Add(half, big.NewInt(1)))
	edges[7].SetBigInt(allHalf)
	copy(s, edges[:])
	return s
}

// fixedBaseBases returns the generators and a random point of each group.
func fixedBaseBases(rng *rand.Rand) ([]bls12381.G1Affine, []bls12381.G2Affine) {
	_, _, g1, g2 := bls12381.Generators()
	return []bls12381.G1Affine{g1, randG1(1, 1, rng)[0]}, []bls12381.G2Affine{g2, randG2(1, 1, rng)[0]}
}

// emulateFixedBase runs testdata/fixed_base_emulate.cc on (curve, c, table,
// scalars) and returns the results' bytes.
func emulateFixedBase(t *testing.T, bin string, curve uint32, c int, table []byte, scalars []fr.Element) []byte {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	threads := uint32((len(scalars) + fixedBaseStrip - 1) / fixedBaseStrip)
	hdr := []uint32{curve, uint32(c), uint32(fixedBaseWindows(c)), uint32(len(scalars)), threads}
	buf := append(append(driver.Bytes(hdr), table...), driver.Bytes(scalars)...)
	require.NoError(t, os.WriteFile(in, buf, 0o600))
	msg, err := exec.Command(bin, in, out).CombinedOutput()
	require.NoError(t, err, "emulator: %s", msg)
	res, err := os.ReadFile(out)
	require.NoError(t, err)
	return res
}

// requireSamePoints fails at the first index where got differs from want.
func requireSamePoints[P comparable](t *testing.T, want, got []P, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		if want[i] != got[i] {
			require.Failf(t, "points differ", "%s: first difference at index %d of %d", what, i, len(want))
		}
	}
}

// TestFixedBaseKernelsOnHost runs the fixed-base kernels' code on the CPU
// (testdata/fixed_base_emulate.cc) with tables from fixedBaseTableG1/G2 and
// checks every result against gnark-crypto's BatchScalarMultiplication,
// byte for byte, at awkward sizes around the per-thread strip and with
// edge scalars, for both generators and a random base, in G1 and G2.
func TestFixedBaseKernelsOnHost(t *testing.T) {
	bin := buildHostKernels(t, "fixed_base_emulate")
	seed := testseed.Seed(t)
	rng := newTestRand(seed)
	g1s, g2s := fixedBaseBases(rng)
	for _, tc := range []struct {
		n, c int // c = 0: the cost model's window
		g2   bool
	}{
		{n: 1}, {n: 2}, {n: 15}, {n: 16}, {n: 17}, {n: 255}, {n: 257}, {n: 1023, c: 9}, {n: 4097},
		{n: 40, c: 2}, {n: 70, c: 16}, {n: 33, c: 13},
		{n: 1, g2: true}, {n: 17, g2: true}, {n: 63, g2: true}, {n: 129, g2: true, c: 7}, {n: 20, g2: true, c: 12},
	} {
		c := tc.c
		if c == 0 {
			c = fixedBaseWindow(tc.n)
		}
		for bi := range 2 {
			name := fmt.Sprintf("g2=%v/n=%d/c=%d/base=%d", tc.g2, tc.n, c, bi)
			scalars := fixedBaseScalars(tc.n, c, rng)
			if tc.g2 {
				base := &g2s[bi]
				raw := emulateFixedBase(t, bin, 2, c, driver.Bytes(fixedBaseTableG2(base, c)), scalars)
				got := unsafe.Slice((*bls12381.G2Affine)(unsafe.Pointer(&raw[0])), len(raw)/int(unsafe.Sizeof(bls12381.G2Affine{})))
				requireSamePoints(t, bls12381.BatchScalarMultiplicationG2(base, scalars), got, name)
				continue
			}
			base := &g1s[bi]
			raw := emulateFixedBase(t, bin, 1, c, driver.Bytes(fixedBaseTableG1(base, c)), scalars)
			got := unsafe.Slice((*bls12381.G1Affine)(unsafe.Pointer(&raw[0])), len(raw)/int(unsafe.Sizeof(bls12381.G1Affine{})))
			requireSamePoints(t, bls12381.BatchScalarMultiplicationG1(base, scalars), got, name)
		}
	}
}

// TestFixedBaseTable checks the host table against gnark-crypto's scalar
// multiplication entry by entry: T[w·2^(c−1) + d − 1] = d·2^(c·w)·G.
func TestFixedBaseTable(t *testing.T) {
	_, _, g1, g2 := bls12381.Generators()
	for _, c := range []int{2, 5, 8} {
		t1, t2 := fixedBaseTableG1(&g1, c), fixedBaseTableG2(&g2, c)
		half := 1 << (c - 1)
		require.Len(t, t1, fixedBaseWindows(c)*half)
		require.Len(t, t2, fixedBaseWindows(c)*half)
		for w := range fixedBaseWindows(c) {
			for d := 1; d <= half; d++ {
				k := new(big.Int).Lsh(big.NewInt(int64(d)), uint(c*w))
				var want1 bls12381.G1Affine
				var want2 bls12381.G2Affine
				want1.ScalarMultiplication(&g1, k)
				want2.ScalarMultiplication(&g2, k)
				i := w*half + d - 1
				assert.True(t, t1[i].Equal(&want1), "g1 c=%d w=%d d=%d", c, w, d)
				assert.True(t, t2[i].Equal(&want2), "g2 c=%d w=%d d=%d", c, w, d)
			}
		}
	}
}

// TestFixedBaseWindow checks the cost model's choices at the sizes the
// setup meets: small inputs take small tables, and from about 2^24 scalars
// the widest window.
func TestFixedBaseWindow(t *testing.T) {
	assert.Equal(t, fixedBaseMinWindow, fixedBaseWindow(1))
	prev := fixedBaseMinWindow
	for l := 0; l <= 30; l++ {
		c := fixedBaseWindow(1 << l)
		assert.GreaterOrEqual(t, c, prev, "2^%d", l)
		prev = c
	}
	assert.Equal(t, fixedBaseMaxWindow, fixedBaseWindow(1<<24))
	assert.Equal(t, fixedBaseMaxWindow, fixedBaseWindow(1<<29))
}

// fixedBaseBackend returns a Backend of its own on GPU 0 with the given
// chunk and forced window (0: the cost model's).
func fixedBaseBackend(t *testing.T, chunk, window int) *Backend {
	t.Helper()
	b, err := New(testDevice(t))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	b.cfg.fbChunk, b.cfg.fbWindow = chunk, window
	return b
}

// TestGPUFixedBaseMatchesGnark checks FixedBaseG1/G2 on the GPU against
// gnark-crypto's BatchScalarMultiplication, byte for byte, on fresh random
// scalars with edge values, at awkward sizes, across several chunks, and
// with the widest window.
func TestGPUFixedBaseMatchesGnark(t *testing.T) {
	testDevice(t)
	seed := testseed.Seed(t)
	rng := newTestRand(seed)
	g1s, g2s := fixedBaseBases(rng)
	ctx := context.Background()
	top := 1<<20 + 1
	if testing.Short() {
		top = 1<<16 + 1
	}
	for _, tc := range []struct{ n, chunk, window int }{
		{n: 1, chunk: defaultFixedBaseChunk}, {n: 17, chunk: defaultFixedBaseChunk},
		{n: 1<<12 - 1, chunk: defaultFixedBaseChunk}, {n: 1<<16 + 1, chunk: defaultFixedBaseChunk},
		{n: top, chunk: defaultFixedBaseChunk},
		{n: 10001, chunk: 4096}, {n: 5000, chunk: 1 << 22, window: 16}, {n: 3000, chunk: 999, window: 3},
	} {
		b := fixedBaseBackend(t, tc.chunk, tc.window)
		for bi := range 2 {
			t.Run(fmt.Sprintf("n=%d/chunk=%d/window=%d/base=%d", tc.n, tc.chunk, tc.window, bi), func(t *testing.T) {
				scalars := fixedBaseScalars(tc.n, b.fixedBaseWindow(tc.n), rng)
				got1, err := b.FixedBaseG1(ctx, &g1s[bi], scalars)
				require.NoError(t, err)
				requireSamePoints(t, bls12381.BatchScalarMultiplicationG1(&g1s[bi], scalars), got1, "g1")
				n2 := min(tc.n, 1<<16+1) // G2's CPU reference is slow
				got2, err := b.FixedBaseG2(ctx, &g2s[bi], scalars[:n2])
				require.NoError(t, err)
				requireSamePoints(t, bls12381.BatchScalarMultiplicationG2(&g2s[bi], scalars[:n2]), got2, "g2")
			})
		}
	}
}

// TestGPUFixedBaseCancel checks that a done context stops FixedBaseG1
// with its error and leaves the Backend usable.
func TestGPUFixedBaseCancel(t *testing.T) {
	b := fixedBaseBackend(t, 1000, 0)
	rng := newTestRand(7)
	_, _, g1, _ := bls12381.Generators()
	scalars := randScalars(5000, rng)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := b.FixedBaseG1(ctx, &g1, scalars)
	require.ErrorIs(t, err, context.Canceled)
	got, err := b.FixedBaseG1(context.Background(), &g1, scalars)
	require.NoError(t, err)
	requireSamePoints(t, bls12381.BatchScalarMultiplicationG1(&g1, scalars), got, "after cancel")
}

// TestFixedBaseEmpty checks that no scalars give no points, without a
// device call.
func TestFixedBaseEmpty(t *testing.T) {
	b := &Backend{}
	_, _, g1, g2 := bls12381.Generators()
	p1, err := b.FixedBaseG1(context.Background(), &g1, nil)
	require.NoError(t, err)
	assert.Empty(t, p1)
	p2, err := b.FixedBaseG2(context.Background(), &g2, nil)
	require.NoError(t, err)
	assert.Empty(t, p2)
}

// BenchmarkFixedBase times FixedBaseG1 and FixedBaseG2 end to end (table
// build, uploads, kernels, downloads) on random scalars and reports points
// per second; one warm-up call first loads the kernels.
func BenchmarkFixedBase(b *testing.B) {
	be := testBackend(b)
	_, _, g1, g2 := bls12381.Generators()
	ctx := context.Background()
	for _, logN := range []uint32{20, 24} {
		scalars := benchVector(logN, 0)
		b.Run(fmt.Sprintf("g1/2^%d", logN), func(b *testing.B) {
			_, err := be.FixedBaseG1(ctx, &g1, scalars[:1024])
			require.NoError(b, err)
			b.ResetTimer()
			for range b.N {
				_, err := be.FixedBaseG1(ctx, &g1, scalars)
				require.NoError(b, err)
			}
			b.ReportMetric(float64(len(scalars))*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mpoints/s")
		})
		b.Run(fmt.Sprintf("g2/2^%d", logN), func(b *testing.B) {
			_, err := be.FixedBaseG2(ctx, &g2, scalars[:1024])
			require.NoError(b, err)
			b.ResetTimer()
			for range b.N {
				_, err := be.FixedBaseG2(ctx, &g2, scalars)
				require.NoError(b, err)
			}
			b.ReportMetric(float64(len(scalars))*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mpoints/s")
		})
	}
}
