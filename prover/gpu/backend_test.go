package gpu

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  Option
	}{
		{"nil logger", WithLogger(nil)},
		{"zero memory limit", WithMemoryLimit(0)},
		{"negative memory limit", WithMemoryLimit(-1)},
		{"chunk too small", WithStagingChunk(1 << 10)},
		{"chunk too large", WithStagingChunk(2 << 30)},
		{"chunk not whole elements", WithStagingChunk(1<<20 + 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(nil, tc.opt)
			require.Error(t, err)
			assert.NotContains(t, err.Error(), "nil device", "the option is rejected first")
		})
	}
	_, err := New(nil, WithMemoryLimit(1<<30), WithStagingChunk(1<<20))
	require.ErrorContains(t, err, "nil device")
}

func TestBadSizesAreRefusedBeforeDeviceWork(t *testing.T) {
	var b Backend // no device: any device work would panic
	for _, n := range []int{0, 1, 3, 6, 1000} {
		v := make([]fr.Element, n)
		_, err := b.QuotientH(v, v, v)
		assert.Error(t, err, "QuotientH size %d", n)
		assert.Error(t, b.NTT(v, false), "NTT size %d", n)
		assert.Error(t, b.INTT(v, true), "INTT size %d", n)
	}
	for _, n := range []int{0, 3, 1000} {
		_, err := b.TimeNTT(make([]fr.Element, n), false, 1)
		assert.ErrorContains(t, err, "ntt timing", "TimeNTT size %d", n)
	}
	v := make([]fr.Element, 4)
	_, err := b.TimeNTT(v, false, 0)
	assert.ErrorContains(t, err, "0 runs")
	_, err = b.QuotientH(v, v, v[:2])
	assert.ErrorContains(t, err, "differ")
	_, err = logSize(1 << (MaxLogN + 1))
	assert.ErrorContains(t, err, "above the supported")
}

func TestMSMEmptySumIsInfinity(t *testing.T) {
	var b Backend // no device: the empty sum needs none
	p1, err := b.MSMG1(nil, nil)
	require.NoError(t, err)
	assert.True(t, p1.Z.IsZero(), "G1 infinity")
	p2, err := b.MSMG2(nil, nil)
	require.NoError(t, err)
	assert.True(t, p2.Z.IsZero(), "G2 infinity")
}

func TestMemoryTable(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		logN uint32
		mib  int64
	}{{16, 7}, {20, 112}, {24, 1792}, {27, 14336}} {
		got := QuotientHBytes(tc.logN)
		assert.InDelta(t, tc.mib*mib, got, float64(5*mib), "2^%d", tc.logN)
	}
}

func TestFits(t *testing.T) {
	const gib = 1 << 30
	require.NoError(t, fits(0, 0, 0, 1))
	require.NoError(t, fits(gib, gib, 4*gib, 0))
	require.ErrorIs(t, fits(gib, gib, 4*gib, gib), ErrDeviceMemory)
	require.ErrorIs(t, fits(0, 4*gib, 4*gib, 0), ErrDeviceMemory, "headroom")
}
