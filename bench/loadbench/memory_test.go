package loadbench

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/internal/hostmem"
	"github.com/cuzk-dev/cuzk/internal/smaps"
)

func TestParseSmapsSumsResidentBytesByMapping(t *testing.T) {
	hm := fromMappings([]smaps.Mapping{
		{Start: 0x55d0c0a00000, End: 0x55d0c0b00000, Name: "/usr/bin/cuzk-bench", Rss: 512 << 10},
		{Start: 0x7f0000000000, End: 0x7f0040000000, Rss: 1048576 << 10},
		{Start: 0x7f0040000000, End: 0x7f0040100000, Name: "/dev/nvidiactl", Rss: 1 << 20},
		{Start: 0x7f0050000000, End: 0x7f0060000000, Name: "/keys/porep c2.rawpk", Rss: 256 << 20},
		{Start: 0x7f0070000000, End: 0x7f0070100000, Name: "[heap]", Rss: 2 << 20},
		{Start: 0x7f0080000000, End: 0x7f0080100000, Rss: 4 << 10},
	})
	assert.Equal(t, map[string]int64{"/usr/bin/cuzk-bench": 512 << 10, anonymous: (1048576 + 4) << 10,
		"/dev/nvidiactl": 1 << 20, "/keys/porep c2.rawpk": 256 << 20, "[heap]": 2 << 20}, hm.Mappings)
	assert.Equal(t, int64(512+1048576+1024+262144+2048+4)<<10, hm.RSS)

	var out bytes.Buffer
	hm.Vectors, hm.GoObjects, hm.GoFree, hm.GoStacks, hm.GoOther, hm.GoGoal, hm.GoLimit = 512<<20, 256<<20, 128<<20, 8<<20, 56<<20, 512<<20, 1<<62
	hm.GoLive, hm.GoGC = 192<<20, 100
	hm.write(&out, "  ")
	assert.Equal(t, "  resident 1.25 GiB by mapping: anonymous 1.00 GiB, /keys/porep c2.rawpk 0.25 GiB, [heap] 0.00 GiB, "+
		"/dev/nvidiactl 0.00 GiB, /usr/bin/cuzk-bench 0.00 GiB\n"+
		"  anonymous 1.00 GiB: solved vectors (out of heap) 0.50 GiB, Go heap objects 0.25 GiB (live at the last collection 0.19 GiB), "+
		"Go heap free (not returned) 0.12 GiB, stacks 0.01 GiB, Go runtime other 0.05 GiB, the rest (CUDA driver, C) 0.06 GiB; Go heap goal 0.50 GiB (GOGC 100), "+
		"memory limit none\n", out.String(), "the heap's mappings not found: its figures stand")

	// The heap's mappings found: what is resident of them counts, and the
	// pages its figures hold beyond that (a large object never written, a
	// key's points given back) are named, not taken from the rest.
	out.Reset()
	hm.GoObjects, hm.GoHeapRSS, hm.GoHeapFound, hm.GoGC = 256<<20+768<<20, 392<<20, true, -1
	hm.write(&out, "  ")
	assert.Contains(t, out.String(), "Go heap 0.38 GiB resident (objects 1.00 GiB, live at the last collection 0.19 GiB; "+
		"free, not returned, 0.12 GiB; stacks 0.01 GiB; 0.75 GiB of these not resident: never written, or given back while live)")
	assert.Contains(t, out.String(), "(GOGC off)")
	assert.Contains(t, out.String(), "the rest (CUDA driver, C) 0.06 GiB;")
	assert.Equal(t, hm.Mappings[anonymous]+hm.Mappings["[heap]"], hm.Vectors+hm.GoHeapRSS+hm.GoOther+hm.rest(), "the parts add up")
}

// The Go heap is the run of adjacent anonymous mappings around a heap
// object; a mapping that does not touch the run, a named one, and an
// address in none, count nothing.
func TestHeapMappings(t *testing.T) {
	maps := []smaps.Mapping{
		{Start: 0x10000, End: 0x20000, Rss: 4 << 10},
		{Start: 0xc000000000, End: 0xc004000000, Rss: 64 << 20},
		{Start: 0xc004000000, End: 0xc008000000},                  // reserved, not yet used
		{Start: 0xc008000000, End: 0xc008400000, Rss: 1 << 20},    // its flags differ: a mapping of its own
		{Start: 0xc008400000, End: 0xc008500000, Name: "/a/file"}, // adjacent, not anonymous
		{Start: 0xc008600000, End: 0xc008700000, Rss: 2 << 20},    // not adjacent
	}
	for _, addr := range []uint64{0xc000000000, 0xc005000000, 0xc0083fffff} {
		rss, ok := heapMappings(maps, addr)
		assert.True(t, ok)
		assert.Equal(t, int64(65<<20), rss, "around %#x", addr)
	}
	rss, ok := heapMappings(maps, 0xc008600000)
	assert.True(t, ok)
	assert.Equal(t, int64(2<<20), rss)
	_, ok = heapMappings(maps, 0xc008400000)
	assert.False(t, ok, "in a file's mapping")
	_, ok = heapMappings(maps, 0xc008500000)
	assert.False(t, ok, "between mappings")
	_, ok = heapMappings(nil, 0xc000000000)
	assert.False(t, ok)
}

// TestReadHostMemoryFindsItsParts reads this process: out-of-heap vectors,
// a mapped file and Go heap objects each show where they belong.
func TestReadHostMemoryFindsItsParts(t *testing.T) {
	if _, err := os.Stat("/proc/self/smaps"); err != nil {
		t.Skipf("SKIP: no /proc/self/smaps here (%v): the breakdown is Linux's", err)
	}
	vec, err := hostmem.Alloc(32 << 20)
	require.NoError(t, err)
	defer func() { require.NoError(t, hostmem.Free(vec)) }()
	for i := 0; i < len(vec); i += 4096 {
		vec[i] = 1
	}
	path := filepath.Join(t.TempDir(), "key file")
	require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte{7}, 16<<20), 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	mapped, err := syscall.Mmap(int(f.Fd()), 0, 16<<20, syscall.PROT_READ, syscall.MAP_SHARED)
	require.NoError(t, err)
	defer func() { require.NoError(t, syscall.Munmap(mapped)) }()
	sum := 0
	for i := 0; i < len(mapped); i += 4096 {
		sum += int(mapped[i])
	}
	require.Equal(t, 7*(16<<20)/4096, sum)
	heap := make([]byte, 24<<20)
	for i := range heap {
		heap[i] = byte(i)
	}
	// A large object never written: the runtime counts it, the system
	// holds none of it (fresh memory is zero without a write).
	unwritten := make([]byte, 256<<20)

	hm, err := readHostMemory()
	require.NoError(t, err)
	require.True(t, hm.GoHeapFound, "the Go heap's mappings")
	assert.GreaterOrEqual(t, hm.GoHeapRSS, int64(24<<20), "the heap slice, written, is resident")
	assert.GreaterOrEqual(t, hm.GoObjects-hm.GoHeapRSS, int64(200<<20), "the unwritten object is counted, not resident")
	assert.GreaterOrEqual(t, hm.rest(), int64(-16<<20), "the parts add up: the unwritten object is not taken from the rest")
	runtime.KeepAlive(unwritten)
	assert.GreaterOrEqual(t, hm.Vectors, int64(32<<20))
	assert.GreaterOrEqual(t, hm.Mappings[path], int64(16<<20), "the mapped file, resident once read")
	assert.GreaterOrEqual(t, hm.Mappings[anonymous]+hm.Mappings["[heap]"], int64(32<<20+24<<20), "vectors and Go heap are anonymous")
	assert.GreaterOrEqual(t, hm.GoObjects, int64(24<<20))
	assert.GreaterOrEqual(t, hm.RSS, int64(72<<20))
	runtime.KeepAlive(heap)
}
