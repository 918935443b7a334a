package keys

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGCPercentFor(t *testing.T) {
	const gib = int64(1) << 30
	for _, c := range []struct {
		heap int64
		want int
	}{
		{0, 100},
		{4 * gib, 100},
		{8 * gib, 50},
		{46 * gib, 10}, // 8.7 %, raised to the floor
		{20 * gib, 20},
		{1000 * gib, 10},
	} {
		assert.Equal(t, c.want, gcPercentFor(c.heap, 4*gib), "%d GiB of keys in the heap", c.heap/gib)
	}
}

// gcHook records the GOGC values a Manager sets.
type gcHook struct {
	mu  sync.Mutex
	got []int
}

func (h *gcHook) set(p int) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, p)
	return 100
}

func (h *gcHook) calls() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int(nil), h.got...)
}

// A key in the Go heap lowers GOGC while it is warm; a mapped one does not
// touch it.
func TestKeysInTheHeapLowerGOGC(t *testing.T) {
	var hook gcHook
	m, err := New(Config{Dir: t.TempDir(), DevSeed: 1, DevKeysInMemory: true, GCPercent: hook.set})
	require.NoError(t, err)
	c := shape(t, 1024)
	h, err := m.Acquire(context.Background(), c)
	require.NoError(t, err)
	assert.Empty(t, hook.calls(), "a key smaller than the slack leaves GOGC at 100")
	h.Release()
	_, err = m.EvictKey(c.Key, Cold)
	require.NoError(t, err)

	m.gcSlack = 1 << 10
	h, err = m.Acquire(context.Background(), c)
	require.NoError(t, err)
	want := gcPercentFor(keyBytes(h.PK), 1<<10)
	require.Less(t, want, 100)
	assert.Equal(t, []int{want}, hook.calls(), "the key in the heap lowered GOGC")
	h.Release()
	_, err = m.EvictKey(c.Key, Cold)
	require.NoError(t, err)
	assert.Equal(t, []int{want, 100}, hook.calls(), "GOGC back to 100 once no key is in the heap")

	var mapped gcHook
	m2, err := New(Config{Dir: t.TempDir(), DevSeed: 1, GCPercent: mapped.set})
	require.NoError(t, err)
	m2.gcSlack = 1 << 10
	h, err = m2.Acquire(context.Background(), c)
	require.NoError(t, err)
	require.NotNil(t, m2.mappedKey(c.Key))
	h.Release()
	assert.Empty(t, mapped.calls(), "a mapped key is not in the heap")
}
