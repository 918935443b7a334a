package gpubench

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSmapsHugeReadsTheMappingThatHoldsTheAddress(t *testing.T) {
	smaps := `7f0000000000-7f0000200000 rw-p 00000000 00:00 0
Size:               2048 kB
AnonHugePages:         0 kB
FilePmdMapped:         0 kB
7f1000000000-7f1040000000 rw-p 00000000 00:00 0
Size:            1048576 kB
AnonHugePages:    524288 kB
FilePmdMapped:      2048 kB
VmFlags: rd wr mr mw me ac hg
7f2000000000-7f2000001000 r--s 00000000 08:01 12 /tmp/x
Size:                  4 kB
AnonHugePages:         0 kB
`
	p := filepath.Join(t.TempDir(), "smaps")
	if err := os.WriteFile(p, []byte(smaps), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		addr       uint64
		huge, size int64
	}{
		{0x7f1000000000, 526336 << 10, 1 << 30},
		{0x7f103fffffff, 526336 << 10, 1 << 30},
		{0x7f0000000010, 0, 2 << 20},
		{0x7f2000000000, 0, 4096},
		{0x7f1040000000, -1, 0}, // between mappings
		{0x10, -1, 0},
	} {
		huge, size := smapsHuge(p, c.addr)
		if huge != c.huge || size != c.size {
			t.Errorf("address %#x: huge %d of %d, want %d of %d", c.addr, huge, size, c.huge, c.size)
		}
	}
	if huge, size := smapsHuge(filepath.Join(t.TempDir(), "missing"), 0x7f1000000000); huge != -1 || size != 0 {
		t.Errorf("a missing file: %d of %d, want -1 of 0", huge, size)
	}
}

func TestHugeBackedFindsAHeapSlice(t *testing.T) {
	b := make([]byte, 1<<20)
	huge, size := hugeBacked(b)
	if _, err := os.Stat("/proc/self/smaps"); err != nil {
		t.Skipf("no /proc/self/smaps here: %v", err)
	}
	if huge < 0 || size < int64(len(b)) {
		t.Errorf("a 1 MiB heap slice: huge %d of a %d-byte mapping; want the mapping that holds it", huge, size)
	}
}

func TestLinkRefusesABadShape(t *testing.T) {
	for _, cfg := range []LinkConfig{{Bytes: 0, Chunk: 1, Runs: 1}, {Bytes: 8, Chunk: 16, Runs: 1}, {Bytes: 8, Chunk: 0, Runs: 1}, {Bytes: 8, Chunk: 8, Runs: 0}} {
		if _, err := Link(nil, cfg); err == nil {
			t.Errorf("Link(%+v) = nil error, want one", cfg)
		}
	}
}

// The link table on a GPU: every kind of host memory gives a row with a
// rate, and the copies it times arrive whole (Link reads the last back).
func TestGPULinkFromEveryKindOfHostMemory(t *testing.T) {
	dev, err := OpenGPU()
	if errors.Is(err, ErrNoGPU) {
		t.Skipf("no GPU here: %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, dev.Close()) })
	cfg := LinkConfig{Bytes: 48<<20 + 4096, Chunk: 16 << 20, Runs: 2, Dir: t.TempDir(), Seed: 7}
	rows, err := Link(dev, cfg)
	require.NoError(t, err)
	require.Len(t, rows, len(linkSources(cfg.Dir)))
	for _, r := range rows {
		assert.Greater(t, r.Min, 1e8, r.Source)
		assert.LessOrEqual(t, r.Min, r.Median, r.Source)
		assert.LessOrEqual(t, r.Median, r.Max, r.Source)
		if r.HugeBytes >= 0 { // the driver's own allocation may lie outside what smaps names
			assert.GreaterOrEqual(t, r.MapBytes, cfg.Bytes, r.Source)
		}
	}
	// Where huge pages come only to those who ask (the kernel's "madvise"
	// or "never"), the base-pages row has none: it did not ask.
	if mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err == nil && !strings.Contains(string(mode), "[always]") {
		base := 0
		for _, r := range rows {
			if strings.Contains(r.Source, "base pages") {
				base++
				if r.HugeBytes >= 0 {
					assert.Zero(t, r.HugeBytes, "%s: THP %s", r.Source, strings.TrimSpace(string(mode)))
				}
			}
		}
		assert.Equal(t, 1, base, "one row of base pages")
	}
	left, err := filepath.Glob(filepath.Join(cfg.Dir, "cuzk-link-*"))
	require.NoError(t, err)
	assert.Empty(t, left, "the file-mapped row's file is removed")
}
