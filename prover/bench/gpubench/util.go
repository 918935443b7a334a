package gpubench

import (
	"fmt"
	"math/bits"
	"strconv"
)

// sizeString writes n as 2^k when it is a power of two.
func sizeString(n int) string {
	if n > 0 && n&(n-1) == 0 {
		return fmt.Sprintf("2^%d", log2(n))
	}
	return strconv.Itoa(n)
}

// log2 returns ⌈log2 n⌉ for n ≥ 1.
func log2(n int) int { return bits.Len(uint(n - 1)) }
