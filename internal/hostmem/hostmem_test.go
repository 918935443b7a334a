package hostmem

import (
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAllocIsZeroedWritableAndFreed(t *testing.T) {
	before := Mapped()
	b, err := Alloc(3 << 20)
	require.NoError(t, err)
	require.Len(t, b, 3<<20)
	assert.Equal(t, before+3<<20, Mapped(), "counted while mapped")
	assert.Zero(t, uintptr(unsafe.Pointer(&b[0]))%4096, "page-aligned")
	for _, i := range []int{0, 1 << 20, len(b) - 1} {
		assert.Zero(t, b[i], "fresh mapping is zeroed")
		b[i] = 0xA5
		assert.Equal(t, byte(0xA5), b[i])
	}
	require.NoError(t, Free(b))
	assert.Equal(t, before, Mapped(), "uncounted once freed")
	_, err = Alloc(0)
	assert.Error(t, err)
}

func TestDiscardKeepsTheEdgesAndZeroesTheInside(t *testing.T) {
	page := syscall.Getpagesize()
	b, err := Alloc(10 * page) // page-aligned, so the test knows where the pages are
	require.NoError(t, err)
	defer func() { require.NoError(t, Free(b)) }()
	for i := range b {
		b[i] = 7
	}
	part := b[100 : 9*page+5] // starts and ends inside pages
	n, err := Discard(part)
	require.NoError(t, err)
	assert.Equal(t, 8*page, n, "the eight whole pages inside")
	assert.Equal(t, byte(7), part[0], "the partial first page stays")
	assert.Equal(t, byte(7), part[page-101], "last byte of the first page")
	assert.Equal(t, byte(0), part[page-100], "the first whole page reads zero")
	assert.Equal(t, byte(0), part[9*page-101], "the last whole page reads zero")
	assert.Equal(t, byte(7), part[len(part)-1], "the partial last page stays")
	assert.Equal(t, byte(7), b[0])
	part[page] = 9 // still writable
	assert.Equal(t, byte(9), part[page])
	n, err = Discard(b[5:10])
	require.NoError(t, err)
	assert.Zero(t, n, "no whole page")
}

// BenchmarkAllocTouch is the first touch of a solved-vectors set (a
// partition's 16 GiB at 2^27; 1 GiB here), which a GPU's page-locking of
// fresh vectors also pays: 4 KiB pages against transparent huge pages.
func BenchmarkAllocTouch(b *testing.B) {
	const n = 1 << 30
	for _, c := range []struct {
		name string
		huge bool
	}{{"4KiB-pages", false}, {"huge-pages", true}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(n)
			for b.Loop() {
				m, err := alloc(n, c.huge)
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; i < n; i += 4096 {
					m[i] = 1
				}
				if err := Free(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
