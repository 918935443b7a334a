package smaps

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sample = `55d0c0a00000-55d0c0b00000 r-xp 00000000 08:01 1234                       /usr/bin/cuzk-bench
Size:               1024 kB
Rss:                 512 kB
VmFlags: rd ex mr mw me dw
7f0000000000-7f0040000000 rw-p 00000000 00:00 0 
Size:            1048576 kB
Rss:             1048576 kB
AnonHugePages:    524288 kB
THPeligible:    1
VmFlags: rd wr mr mw me ac
7f0040000000-7f0040100000 rw-s 00000000 00:05 77                         /dev/nvidiactl
Rss:                1024 kB
7f0050000000-7f0060000000 r--s 00000000 08:01 99                         /keys/porep c2.rawpk
Rss:              262144 kB
FilePmdMapped:      2048 kB
7f0070000000-7f0070100000 rw-p 00000000 00:00 0                          [heap]
Rss:                2048 kB
`

// Each mapping's range, name (files with spaces in their names whole,
// anonymous ones empty) and sizes.
func TestParse(t *testing.T) {
	ms, err := Parse(strings.NewReader(sample))
	require.NoError(t, err)
	assert.Equal(t, []Mapping{
		{Start: 0x55d0c0a00000, End: 0x55d0c0b00000, Name: "/usr/bin/cuzk-bench", Rss: 512 << 10},
		{Start: 0x7f0000000000, End: 0x7f0040000000, Rss: 1 << 30, AnonHuge: 512 << 20},
		{Start: 0x7f0040000000, End: 0x7f0040100000, Name: "/dev/nvidiactl", Rss: 1 << 20},
		{Start: 0x7f0050000000, End: 0x7f0060000000, Name: "/keys/porep c2.rawpk", Rss: 256 << 20, FilePmd: 2 << 20},
		{Start: 0x7f0070000000, End: 0x7f0070100000, Name: "[heap]", Rss: 2 << 20},
	}, ms)
}

// A malformed size or range is an error that names its line.
func TestParseRefusesMalformedLines(t *testing.T) {
	_, err := Parse(strings.NewReader("7f00-7f01 rw-p 00000000 00:00 0\nRss: many kB\n"))
	assert.ErrorContains(t, err, `Rss line "Rss: many kB"`)
	_, err = Parse(strings.NewReader("7f00-7f01 rw-p 00000000 00:00 0\nAnonHugePages: x kB\n"))
	assert.ErrorContains(t, err, `AnonHugePages line "AnonHugePages: x kB"`)
	_, err = Parse(strings.NewReader("7f0z-7f01 rw-p 00000000 00:00 0\n"))
	assert.ErrorContains(t, err, `mapping line "7f0z-7f01`)
	_, err = Parse(strings.NewReader("7f02-7f01 rw-p 00000000 00:00 0\n"))
	assert.ErrorContains(t, err, "not an address range")
}

// Holding finds the mapping an address lies in, the last byte included
// and the end excluded; Run joins the adjacent mappings keep accepts.
func TestHoldingAndRun(t *testing.T) {
	ms := []Mapping{
		{Start: 0x1000, End: 0x2000},
		{Start: 0xc000000000, End: 0xc004000000, Rss: 64 << 20},
		{Start: 0xc004000000, End: 0xc008000000},
		{Start: 0xc008000000, End: 0xc008400000, Name: "/a/file"},
		{Start: 0xc008400000, End: 0xc008500000, Rss: 1 << 20},
	}
	for addr, want := range map[uint64]int{0x1000: 0, 0x1fff: 0, 0xc000000000: 1, 0xc004000000: 2, 0xc0084fffff: 4} {
		i, ok := Holding(ms, addr)
		assert.True(t, ok, "%#x", addr)
		assert.Equal(t, want, i, "%#x", addr)
	}
	for _, addr := range []uint64{0, 0x2000, 0xc008500000} {
		_, ok := Holding(ms, addr)
		assert.False(t, ok, "%#x", addr)
	}
	anon := func(m Mapping) bool { return m.Name == "" }
	lo, hi := Run(ms, 2, anon)
	assert.Equal(t, [2]int{1, 2}, [2]int{lo, hi}, "the file stops the run, as does the gap before 0xc000000000")
	lo, hi = Run(ms, 4, anon)
	assert.Equal(t, [2]int{4, 4}, [2]int{lo, hi})
	lo, hi = Run(ms, 4, func(Mapping) bool { return true })
	assert.Equal(t, [2]int{1, 4}, [2]int{lo, hi})
}

// This process's own smaps: a heap slice lies in an anonymous mapping that
// is resident once written; a file that does not exist is an error.
func TestReadSelf(t *testing.T) {
	if _, err := os.Stat(Self); err != nil {
		t.Skipf("SKIP: no %s here (%v): smaps is Linux's", Self, err)
	}
	b := make([]byte, 8<<20)
	for i := range b {
		b[i] = 1
	}
	ms, err := Read(Self)
	require.NoError(t, err)
	i, ok := Holding(ms, uint64(uintptr(unsafe.Pointer(&b[0]))))
	require.True(t, ok)
	assert.Empty(t, ms[i].Name)
	lo, hi := Run(ms, i, func(m Mapping) bool { return m.Name == "" })
	var rss int64
	for _, m := range ms[lo : hi+1] {
		rss += m.Rss
	}
	assert.GreaterOrEqual(t, rss, int64(8<<20))
	_, err = Read(filepath.Join(t.TempDir(), "missing"))
	assert.Error(t, err)
}
