package stats

import (
	"math"
	"slices"
)

// Number is what a sample may be: an integer or a float, durations included.
type Number interface {
	~int | ~int32 | ~int64 | ~uint | ~uint32 | ~uint64 | ~float32 | ~float64
}

// Quantile returns the q-quantile of s by the package's one definition (see
// the package comment): the nearest rank ⌈q·n⌉, or the mean of ranks q·n and
// q·n+1 when q·n is whole. q is clamped to [0, 1]; no samples give 0. s is
// not reordered.
func Quantile[T Number](s []T, q float64) T {
	if len(s) == 0 {
		return 0
	}
	c := slices.Clone(s)
	slices.Sort(c)
	return sortedQuantile(c, q)
}

// Quantiles returns the quantile of s at each of qs, sorting s once.
func Quantiles[T Number](s []T, qs ...float64) []T {
	out := make([]T, len(qs))
	if len(s) == 0 {
		return out
	}
	c := slices.Clone(s)
	slices.Sort(c)
	for i, q := range qs {
		out[i] = sortedQuantile(c, q)
	}
	return out
}

// Median returns Quantile(s, 0.5): the middle sample, or the mean of the two
// middle samples for an even count; 0 when there are none.
func Median[T Number](s []T) T { return Quantile(s, 0.5) }

// Mean returns the arithmetic mean of s, 0 when there are none. Integer
// types, durations included, divide with truncation toward zero; the sum
// must fit T.
func Mean[T Number](s []T) T {
	if len(s) == 0 {
		return 0
	}
	var sum T
	for _, v := range s {
		sum += v
	}
	return sum / T(len(s))
}

// sortedQuantile is Quantile over samples already sorted.
func sortedQuantile[T Number](c []T, q float64) T {
	n := len(c)
	k := min(max(q, 0), 1) * float64(n)
	// A rank that is whole but for rounding (0.9·100 = 90.00000000000001)
	// counts as whole: q is a decimal fraction, not its binary neighbour.
	if r := math.Round(k); math.Abs(k-r) < 1e-9 {
		lo, hi := rank(c, int(r)), rank(c, int(r)+1)
		return lo + (hi-lo)/2
	}
	return rank(c, int(math.Ceil(k)))
}

// rank returns the i-th smallest sample, counting from 1, clamped to the
// first and the last.
func rank[T Number](c []T, i int) T { return c[min(max(i, 1), len(c))-1] }
