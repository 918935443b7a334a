package groth16

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/internal/testseed"
)

// A Workspace counts a mask's kept entries once and serves the count again
// for the same mask; another mask (or a mask of another length at the same
// address) is counted anew.
func TestKeptCacheCountsAMaskOnce(t *testing.T) {
	rng := rand.New(rand.NewSource(int64(testseed.Seed(t))))
	masks := make([][]bool, 3)
	for i := range masks {
		masks[i] = make([]bool, 3*vecBlock+rng.Intn(vecBlock))
		for j := range masks[i] {
			masks[i][j] = rng.Intn(4) == 0
		}
	}
	var c keptCache
	for _, m := range masks {
		want := countKept(m)
		require.Equal(t, want, c.of(m))
		got := c.of(m)
		assert.Equal(t, want, got)
		assert.Same(t, &c.k[0], &got[0], "the second call is served from the cache")
	}
	short := masks[0][:vecBlock+1]
	c.of(masks[0])
	assert.Equal(t, countKept(short), c.of(short), "same address, another length")
	assert.Equal(t, countKept(nil), c.of(nil))
}

// BenchmarkKeptCache is the mask counting Prove does per proof for each of
// the A and B masks: counted (the first proof with a Workspace) and served
// from the cache (every later one), at 2^24 and 2^27 flags.
func BenchmarkKeptCache(b *testing.B) {
	for _, log := range []int{24, 27} {
		mask := make([]bool, 1<<log)
		for i := range mask {
			mask[i] = i%4 == 0
		}
		b.Run(fmt.Sprintf("2^%d/counted", log), func(b *testing.B) {
			for b.Loop() {
				var c keptCache
				c.of(mask)
			}
		})
		b.Run(fmt.Sprintf("2^%d/cached", log), func(b *testing.B) {
			var c keptCache
			c.of(mask)
			for b.Loop() {
				c.of(mask)
			}
		})
	}
}
