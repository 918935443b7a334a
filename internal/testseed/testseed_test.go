package testseed

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in       string
		want     uint64
		set, err bool
	}{
		{"", 0, false, false},
		{"  ", 0, false, false},
		{"42", 42, true, false},
		{" 18446744073709551615 ", 1<<64 - 1, true, false},
		{"0x2a", 42, true, false},
		{"-1", 0, false, true},
		{"seed", 0, false, true},
		{"18446744073709551616", 0, false, true},
	}
	for _, tc := range cases {
		seed, set, err := parse(tc.in)
		if tc.err {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.set, set, tc.in)
		assert.Equal(t, tc.want, seed, tc.in)
	}
}

func TestSeedTakesTheOverride(t *testing.T) {
	t.Setenv(Env, "7")
	assert.Equal(t, uint64(7), Seed(t))
	assert.Equal(t, uint64(7), Seed(t), "the same seed every call")
}

func TestSeedFromTheClockDiffers(t *testing.T) {
	t.Setenv(Env, "")
	a := Seed(t)
	require.Eventually(t, func() bool { return Seed(t) != a }, time.Second, time.Microsecond)
}
