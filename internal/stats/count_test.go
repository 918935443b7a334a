package stats

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLog2(t *testing.T) {
	cases := []struct{ n, want int }{
		{-3, 0}, {0, 0}, {1, 0}, {2, 1}, {3, 2}, {4, 2}, {5, 3}, {1 << 20, 20}, {1<<20 + 1, 21}, {1<<27 - 1, 27},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, Log2(tc.n), tc.n)
	}
}

func TestParseCount(t *testing.T) {
	cases := []struct {
		in   string
		want int
		err  bool
	}{
		{"2^20", 1 << 20, false},
		{" 2^0", 1, false},
		{" 2^0 ", 1, false},
		{"2^40", 1 << 40, false},
		{"1024", 1024, false},
		{"1000", 1000, false},
		{"2^41", 0, true},
		{"2^-1", 0, true},
		{"2^x", 0, true},
		{"2^", 0, true},
		{"0", 0, true},
		{"-4", 0, true},
		{"", 0, true},
		{"1e6", 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseCount(tc.in)
			if tc.err {
				assert.ErrorIs(t, err, ErrSize)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			back, err := ParseCount(FormatCount(got))
			require.NoError(t, err)
			assert.Equal(t, got, back, "FormatCount reads back")
		})
	}
}

func TestFormatCount(t *testing.T) {
	cases := []struct {
		n    int
		want string
	}{
		{1, "2^0"}, {2, "2^1"}, {1 << 27, "2^27"}, {3, "3"}, {1000, "1000"}, {0, "0"}, {-8, "-8"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, FormatCount(tc.n), tc.n)
	}
}

func TestMs(t *testing.T) {
	cases := []struct {
		d       time.Duration
		ms, sig string
	}{
		{0, "0.0 ms", "0.000 ms"},
		{12 * time.Microsecond, "0.0 ms", "0.012 ms"},
		{1234 * time.Microsecond, "1.2 ms", "1.234 ms"},
		{12345 * time.Microsecond, "12.3 ms", "12.3 ms"},
		{123456 * time.Microsecond, "123.5 ms", "123 ms"},
		{25 * time.Second, "25000.0 ms", "25000 ms"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.ms, Ms(tc.d), tc.d)
		assert.Equal(t, tc.sig, MsSig(tc.d), tc.d)
	}
}

func TestFormatDuration(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{0, "0.0 ms"},
		{456 * time.Microsecond, "0.5 ms"},
		{12345 * time.Microsecond, "12.3 ms"},
		{99_940 * time.Microsecond, "99.9 ms"},
		{99_960 * time.Microsecond, "100.0 ms"}, // rounds up below the switch to whole ms
		{100 * time.Millisecond, "100 ms"},
		{999 * time.Millisecond, "999 ms"},
		{time.Second, "1.00 s"},
		{1234567 * time.Microsecond, "1.23 s"},
		{9_999 * time.Millisecond, "10.00 s"},
		{12345 * time.Millisecond, "12.3 s"},
		{-12345 * time.Microsecond, "-12.3 ms"},
		{-2 * time.Second, "-2.00 s"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, FormatDuration(tc.d), tc.d)
	}
}
