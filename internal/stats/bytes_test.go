package stats

import (
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseBytes(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		err  bool
	}{
		{"0", 0, false},
		{"4096", 4096, false},
		{"68719476736", 64 * GiB, false},
		{"64GiB", 64 * GiB, false},
		{"64 GiB", 64 * GiB, false},
		{" 64gib ", 64 * GiB, false},
		{"1.5GiB", 3 * GiB / 2, false},
		{".5KiB", 512, false},
		{"512MiB", 512 * MiB, false},
		{"3KiB", 3 * KiB, false},
		{"2TiB", 2 * TiB, false},
		{"1PiB", PiB, false},
		{"7EiB", 7 * EiB, false},
		{"10GB", 10e9, false},
		{"10kB", 10e3, false},
		{"10KB", 10e3, false},
		{"1MB", 1e6, false},
		{"100B", 100, false},
		{"8EiB", 0, true}, // 2^63 overflows
		{"9223372036854775808", 0, true},
		{"0.1KiB", 0, true}, // 102.4 bytes
		{"64G", 0, true},    // ambiguous
		{"64K", 0, true},
		{"GiB", 0, true},
		{"", 0, true},
		{"-1", 0, true},
		{"1e9", 0, true},
		{"1.2.3MiB", 0, true},
		{"NaN", 0, true},
		{"Inf", 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseBytes(tc.in)
			if tc.err {
				assert.ErrorIs(t, err, ErrSize)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestFormatBytes(t *testing.T) {
	cases := []struct {
		in   int64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{KiB, "1.0 KiB"},
		{3*KiB + 512, "3.5 KiB"},
		{12 * MiB, "12.0 MiB"},
		{GiB, "1.00 GiB"},
		{3 * GiB / 2, "1.50 GiB"},
		{100 * GiB, "100.00 GiB"},
		{-2 * MiB, "-2.0 MiB"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, FormatBytes(tc.in), tc.in)
	}
	assert.Equal(t, "0.25 GiB", FormatGiB(GiB/4))
	assert.Equal(t, "300 MiB", FormatMiB(300*MiB))
	assert.Equal(t, "1537 MiB", FormatMiB(1536*MiB+700*KiB))
	assert.Equal(t, "0 MiB", FormatMiB(0))
}

func TestFormatBytesParsesBack(t *testing.T) {
	for _, b := range []int64{0, 1, 1023, KiB, 3*KiB + 512, 12 * MiB, GiB, 3 * GiB / 2, 64 * GiB} {
		got, err := ParseBytes(FormatBytes(b))
		require.NoError(t, err, b)
		assert.Equal(t, b, got)
	}
}

func TestBytesFlag(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	b := Bytes(64 * GiB)
	fs.Var(&b, "budget", "bytes")
	require.NoError(t, fs.Parse([]string{"-budget", "512MiB"}))
	assert.Equal(t, Bytes(512*MiB), b)
	assert.Equal(t, "512.0 MiB", b.String())
	assert.Error(t, fs.Parse([]string{"-budget", "64G"}))
	for _, bare := range []string{"64", "0.5", " 4096 "} {
		var x Bytes
		require.ErrorIs(t, x.Set(bare), ErrNoUnit, "%q: a number without a unit could mean bytes or GiB", bare)
		err := fs.Parse([]string{"-budget", bare})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "B for bytes")
	}
	require.NoError(t, fs.Parse([]string{"-budget", "0"}), "0 needs no unit")
	assert.Equal(t, Bytes(0), b)
	require.NoError(t, fs.Parse([]string{"-budget", "64B"}))
	assert.Equal(t, Bytes(64), b)

	text, err := Bytes(3 * GiB).MarshalText()
	require.NoError(t, err)
	assert.Equal(t, "3221225472B", string(text))
	var back Bytes
	require.NoError(t, back.UnmarshalText(text))
	assert.Equal(t, Bytes(3*GiB), back)
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"64GiB", "1.5 MB", "0", ".5KiB", "8EiB", "1e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBytes(s)
		if err != nil {
			return
		}
		assert.GreaterOrEqual(t, b, int64(0), s)
	})
}
