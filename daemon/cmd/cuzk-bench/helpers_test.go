package main

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"testing"
	"time"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"2^20", 1 << 20, true}, {" 2^0 ", 1, true}, {"1000", 1000, true},
		{"2^41", 0, false}, {"2^", 0, false}, {"0", 0, false}, {"-3", 0, false}, {"x", 0, false},
	} {
		got, err := parseSize(tc.in)
		if !tc.ok {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	logs, err := parseLogList("2^24, 2^20,,1024")
	require.NoError(t, err)
	assert.Equal(t, []int{24, 20, 10}, logs)
}

func TestMedian(t *testing.T) {
	assert.Equal(t, time.Duration(0), samples(nil).median())
	assert.Equal(t, 3*time.Millisecond, samples{5, 1, 3}.median()*time.Millisecond)
	assert.Equal(t, 2*time.Millisecond, samples{4, 1, 3, 0}.median()*time.Millisecond)
}

func TestRandomScalarsInRange(t *testing.T) {
	v := randomScalars(1<<12, 9)
	q := fr.Modulus()
	for i := range v {
		raw := new(big.Int) // the Montgomery limbs as stored, not the value they stand for
		for k := 3; k >= 0; k-- {
			raw.Lsh(raw, 64).Or(raw, new(big.Int).SetUint64(v[i][k]))
		}
		require.Negative(t, raw.Cmp(q), "element %d", i)
	}
	assert.Equal(t, v, randomScalars(1<<12, 9), "deterministic in the seed")
	assert.NotEqual(t, v, randomScalars(1<<12, 10))
}

// TestFoldedReference: for tiled bases, the folded reference MSM equals
// gnark's MultiExp on the full input, at awkward sizes.
func TestSetBits(t *testing.T) {
	const n = 1 << 16
	for _, frac := range []float64{0, 0.25, 0.9, 1} {
		v := randomScalars(n, 7)
		orig := append([]fr.Element(nil), v...)
		setBits(v, frac, 8)
		var zero, one, kept int
		for i := range v {
			switch {
			case v[i] == orig[i]:
				kept++
			case v[i].IsZero():
				zero++
			case v[i].IsOne():
				one++
			default:
				t.Fatalf("frac %v: element %d is neither kept nor a bit", frac, i)
			}
		}
		bits := float64(zero+one) / n
		assert.InDelta(t, frac, bits, 0.01, "frac %v: share of bits", frac)
		if frac > 0 {
			assert.InDelta(t, 0.5, float64(one)/float64(zero+one), 0.02, "frac %v: ones among the bits", frac)
		}
		again := append([]fr.Element(nil), orig...)
		setBits(again, frac, 8)
		assert.Equal(t, v, again, "frac %v: deterministic in the seed", frac)
	}
}

func TestCopyParallel(t *testing.T) {
	src := randomScalars(1_000_003, 2)
	dst := make([]fr.Element, len(src)+5)
	copyParallel(dst, src)
	assert.Equal(t, src, dst[:len(src)])
	assert.Equal(t, make([]fr.Element, 5), dst[len(src):], "nothing written past src")
}

func TestFoldedReference(t *testing.T) {
	const tile = 16
	g1, g2 := randomG1(tile, 1), randomG2(tile, 2)
	for _, n := range []int{1, tile - 1, tile, tile + 1, 5*tile + 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := randomScalars(n, uint64(n))
			b1, b2 := tiled(g1, n), tiled(g2, n)
			direct1, _, err := refG1(g1, b1, s, true)
			require.NoError(t, err)
			folded1, how, err := refG1(g1, b1, s, false)
			require.NoError(t, err)
			assert.True(t, direct1.Equal(&folded1), how)
			direct2, _, err := refG2(g2, b2, s, true)
			require.NoError(t, err)
			folded2, _, err := refG2(g2, b2, s, false)
			require.NoError(t, err)
			assert.True(t, direct2.Equal(&folded2))
			if n > tile {
				s[n-1].Add(&s[n-1], new(fr.Element).SetOne())
				bad, _, err := refG1(g1, b1, s, false)
				require.NoError(t, err)
				assert.False(t, direct1.Equal(&bad), "a changed scalar changes the folded result")
			}
		})
	}
}

// TestQuotientProbe runs the CPU backend's quotient, which the probe must
// accept, and a corrupted one, which it must reject.
func TestQuotientProbe(t *testing.T) {
	be, err := cpu.New()
	require.NoError(t, err)
	for _, logN := range []int{1, 4, 10} {
		n := 1 << logN
		a, b := randomScalars(n, 1), randomScalars(n, 2)
		c := make([]fr.Element, n)
		for i := range c {
			c[i].Mul(&a[i], &b[i])
		}
		probe, err := newQuotientProbe(a, b, c, randomScalars(1, 3)[0])
		require.NoError(t, err)
		h, err := be.QuotientH(context.Background(), a, b, c)
		require.NoError(t, err)
		assert.NoError(t, probe.check(h), "2^%d", logN)
		h[n/2].Add(&h[n/2], new(fr.Element).SetOne())
		assert.ErrorIs(t, probe.check(h), errMismatch, "2^%d corrupted", logN)
	}
}

func TestEstimates(t *testing.T) {
	assert.Equal(t, float64(1<<19)*20, nttMuls(20))
	// 2^20 points, c = 16: 16 windows, 2^15 buckets each.
	want := float64(1<<20)*16*10 + 16*float64(1<<15)*2*14
	assert.Equal(t, want, msmMuls(1<<20, 16, 16, false))
	assert.Equal(t, 3*want, msmMuls(1<<20, 16, 16, true))
	// A full table: one bucket window of 2^21 buckets for 12 digit windows.
	assert.Equal(t, float64(1<<24)*12*10+float64(1<<21)*2*14, msmMuls(1<<24, 22, 1, false))
	r := fixedMulRate(35e9, "test")
	assert.InDelta(t, 35e9/2.25, r.fp, 1)
	assert.Equal(t, time.Second, estimate(35e9, r.fr))
	assert.Equal(t, "24.0 ms", spparkCell(spparkMSMG1, 20))
	assert.Equal(t, "-", spparkCell(spparkMSMG1, 21))
}

func TestPartitionMemory(t *testing.T) {
	s := partitionShape{log: 27, wires: (1 << 27) / 32 * 31}
	s.bWires = s.wires
	p, err := planMemory(s)
	require.NoError(t, err)
	// A, B and L‖H in G1 at 96 bytes, B in G2 at 192 bytes.
	assert.Equal(t, int64(s.wires*2+s.lh())*96, p.basesG1)
	assert.Equal(t, int64(s.wires)*192, p.basesG2)
	assert.Greater(t, p.scratch, int64(20<<30), "2^28-point MSM scratch")
	assert.Less(t, p.device(), int64(139<<30), "fits an H200")
	require.NoError(t, checkFit(p, 139<<30, 200<<30))
	err = checkFit(p, 80<<30, 0)
	require.ErrorIs(t, err, errNoFit)
	assert.Contains(t, err.Error(), "device memory")
	assert.ErrorIs(t, checkFit(p, 139<<30, 64<<30), errNoFit, "host too small")
	var out bytes.Buffer
	printMemPlan(&out, s, p, 139<<30, 0)
	assert.Contains(t, out.String(), "device total")
	assert.Contains(t, out.String(), "host available now")
}

func TestCountWires(t *testing.T) {
	v := randomScalars(100_000, 3)
	setBits(v, 0.5, 4)
	var zero, one int
	for i := range v {
		switch {
		case v[i].IsZero():
			zero++
		case v[i].IsOne():
			one++
		}
	}
	pub := []fr.Element{fr.One(), {}, fr.NewElement(7)}
	got := countWires(pub, v)
	assert.Equal(t, wireShare{zero: zero + 1, one: one + 1, other: len(v) - zero - one + 1}, got)
	assert.InDelta(t, 50_000, zero+one, 1_000, "setBits(0.5) makes about half the values bits")
	assert.Contains(t, got.String(), "100003 wires")
}

// countingAllocator is a groth16.HostAllocator on the Go heap that keeps
// the buffers it handed out.
type countingAllocator struct{ bufs [][]byte }

func (a *countingAllocator) AllocHost(n int) ([]byte, error) {
	a.bufs = append(a.bufs, make([]byte, n))
	return a.bufs[len(a.bufs)-1], nil
}

func (a *countingAllocator) FreeHost([]byte) error { return nil }

// The synthesizer solves into the allocator's buffers, or into the first
// solve's heap buffers, every time, with the values of a fresh solve.
func TestSynthesizerReusesBuffers(t *testing.T) {
	c, err := porep.New(1<<10, 5)
	require.NoError(t, err)
	sys, err := r1cs.Compile(c)
	require.NoError(t, err)
	want, err := r1cs.Solve(c)
	require.NoError(t, err)
	vectors := func(a *r1cs.Assignment) [][]fr.Element { return [][]fr.Element{a.Public, a.Private, a.A, a.B, a.C} }
	for _, alloc := range []*countingAllocator{nil, {}} {
		var ha groth16.HostAllocator
		if alloc != nil {
			ha = alloc
		}
		syn, err := newSynthesizer(c, sys, ha)
		require.NoError(t, err)
		first, err := syn.solve()
		require.NoError(t, err)
		if alloc != nil {
			require.Len(t, alloc.bufs, 5, "public, private, a, b, c")
			for i, v := range vectors(first) {
				assert.Same(t, unsafe.SliceData(alloc.bufs[i]), (*byte)(unsafe.Pointer(unsafe.SliceData(v))), "vector %d in the allocator's memory", i)
			}
		}
		second, err := syn.solve()
		require.NoError(t, err)
		for i, v := range vectors(second) {
			assert.Same(t, unsafe.SliceData(vectors(first)[i]), unsafe.SliceData(v), "vector %d reused", i)
			assert.Equal(t, vectors(want)[i], v, "vector %d equals a fresh solve's", i)
		}
		assert.Equal(t, want.NbConstraints, second.NbConstraints)
	}
}
