package stats

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// MaxLog2 is the largest exponent ParseCount accepts in 2^k.
const MaxLog2 = 40

// Log2 returns ⌈log₂ n⌉: the smallest k with 2^k ≥ n, and 0 for n ≤ 1. It is
// exact for powers of two (Log2(1<<k) = k), so it also names a domain size.
func Log2(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

// ParseCount reads a count such as a constraint count or a domain size,
// written as 2^k (0 ≤ k ≤ MaxLog2) or as a positive integer.
func ParseCount(s string) (int, error) {
	s = strings.TrimSpace(s)
	if exp, ok := strings.CutPrefix(s, "2^"); ok {
		k, err := strconv.Atoi(exp)
		if err != nil || k < 0 || k > MaxLog2 {
			return 0, fmt.Errorf("%w %q: want 2^k with 0 ≤ k ≤ %d", ErrSize, s, MaxLog2)
		}
		return 1 << k, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%w %q: want a positive integer or 2^k", ErrSize, s)
	}
	return n, nil
}

// FormatCount writes n as 2^k when it is a power of two, else in decimal;
// ParseCount reads either back.
func FormatCount(n int) string {
	if n > 0 && n&(n-1) == 0 {
		return fmt.Sprintf("2^%d", Log2(n))
	}
	return strconv.Itoa(n)
}
