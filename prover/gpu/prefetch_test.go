package gpu

import "testing"

// The vectors sent ahead go with the L‖H MSM's chunks in equal shares of
// whole pages: every byte is sent by the last chunk, none twice, and no
// chunk carries much more than its share.
func TestAheadShareSpreadsEveryByte(t *testing.T) {
	for _, total := range []int{0, 1, 4095, 4096, 4097, 1 << 20, 4270718208, 4270718208 + 3*(1<<20) + 17} {
		for _, n := range []int{1, 2, 3, 7, 16, 32, 33} {
			left, most := total, 0
			for i := 0; i < n; i++ {
				s := aheadShare(left, i, n)
				if s < 0 || s > left {
					t.Fatalf("total %d, chunk %d of %d: share %d of %d left", total, i, n, s, left)
				}
				if i < n-1 && s != left && s%4096 != 0 {
					t.Errorf("total %d, chunk %d of %d: share %d is not whole pages", total, i, n, s)
				}
				most = max(most, s)
				left -= s
			}
			if left != 0 {
				t.Errorf("total %d in %d chunks: %d bytes never sent", total, n, left)
			}
			if fair := total/n + 4096; most > fair {
				t.Errorf("total %d in %d chunks: a chunk carried %d bytes, more than its share %d", total, n, most, fair)
			}
		}
	}
}
