package benchinput

import (
	"context"
	"fmt"
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/cpu"
)

func TestRandomScalarsInRange(t *testing.T) {
	v := RandomScalars(1<<12, 9)
	q := fr.Modulus()
	for i := range v {
		raw := new(big.Int) // the Montgomery limbs as stored, not the value they stand for
		for k := 3; k >= 0; k-- {
			raw.Lsh(raw, 64).Or(raw, new(big.Int).SetUint64(v[i][k]))
		}
		require.Negative(t, raw.Cmp(q), "element %d", i)
	}
	assert.Equal(t, v, RandomScalars(1<<12, 9), "deterministic in the seed")
	assert.NotEqual(t, v, RandomScalars(1<<12, 10))
}

// SetBits makes the asked share of bits, half of them ones, deterministically.
func TestSetBits(t *testing.T) {
	const n = 1 << 16
	for _, frac := range []float64{0, 0.25, 0.9, 1} {
		v := RandomScalars(n, 7)
		orig := append([]fr.Element(nil), v...)
		SetBits(v, frac, 8)
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
		SetBits(again, frac, 8)
		assert.Equal(t, v, again, "frac %v: deterministic in the seed", frac)
	}
}

// TestFoldedReference: for tiled bases, the folded reference MSM equals
// gnark's MultiExp on the full input, at awkward sizes.
func TestFoldedReference(t *testing.T) {
	const tile = 16
	g1, g2 := RandomG1(tile, 1), RandomG2(tile, 2)
	for _, n := range []int{1, tile - 1, tile, tile + 1, 5*tile + 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := RandomScalars(n, uint64(n))
			b1, b2 := Tiled(g1, n), Tiled(g2, n)
			direct1, _, err := RefG1(g1, b1, s, true)
			require.NoError(t, err)
			folded1, how, err := RefG1(g1, b1, s, false)
			require.NoError(t, err)
			assert.True(t, direct1.Equal(&folded1), how)
			direct2, _, err := RefG2(g2, b2, s, true)
			require.NoError(t, err)
			folded2, _, err := RefG2(g2, b2, s, false)
			require.NoError(t, err)
			assert.True(t, direct2.Equal(&folded2))
			if n > tile {
				s[n-1].Add(&s[n-1], new(fr.Element).SetOne())
				bad, _, err := RefG1(g1, b1, s, false)
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
		a, b := RandomScalars(n, 1), RandomScalars(n, 2)
		c := make([]fr.Element, n)
		for i := range c {
			c[i].Mul(&a[i], &b[i])
		}
		probe, err := NewQuotientProbe(a, b, c, RandomScalars(1, 3)[0])
		require.NoError(t, err)
		h, err := be.QuotientH(context.Background(), a, b, c)
		require.NoError(t, err)
		assert.NoError(t, probe.Check(h), "2^%d", logN)
		h[n/2].Add(&h[n/2], new(fr.Element).SetOne())
		assert.ErrorIs(t, probe.Check(h), ErrMismatch, "2^%d corrupted", logN)
	}
}

func TestCountWires(t *testing.T) {
	v := RandomScalars(100_000, 3)
	SetBits(v, 0.5, 4)
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
	got := CountWires(pub, v)
	assert.Equal(t, WireShare{Zero: zero + 1, One: one + 1, Other: len(v) - zero - one + 1}, got)
	assert.InDelta(t, 50_000, zero+one, 1_000, "SetBits(0.5) makes about half the values bits")
	assert.Contains(t, got.String(), "100003 wires")
}

// The fold of a vector given in parts equals the fold of the whole, and so
// the MSM of tiled bases over it.
func TestRefG1Parts(t *testing.T) {
	const tile = 16
	g1 := RandomG1(tile, 3)
	for _, split := range [][2]int{{0, 40}, {1, 39}, {17, 23}, {33, 0}, {5, 5}} {
		a, b := RandomScalars(split[0], 4), RandomScalars(split[1], 5)
		whole := append(append([]fr.Element(nil), a...), b...)
		want, _, err := RefG1(g1, Tiled(g1, len(whole)), whole, true)
		require.NoError(t, err)
		got, how, err := RefG1Parts(g1, a, b)
		require.NoError(t, err)
		assert.True(t, want.Equal(&got), "split %v", split)
		assert.Contains(t, how, "folded to 2^4")
		if len(b) > 0 {
			b[0].Add(&b[0], new(fr.Element).SetOne())
			bad, _, err := RefG1Parts(g1, a, b)
			require.NoError(t, err)
			assert.False(t, want.Equal(&bad), "split %v: a changed scalar changes the result", split)
		}
	}
}
