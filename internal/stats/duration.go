package stats

import (
	"fmt"
	"time"
)

// Ms writes d in milliseconds with one decimal ("12.3 ms"), for columns of
// values of one magnitude.
func Ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

// MsSig writes d in milliseconds with about three significant digits:
// "123 ms", "12.3 ms", "1.234 ms", "0.012 ms" (never less than a microsecond),
// for columns whose values span magnitudes.
func MsSig(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch a := max(v, -v); {
	case a >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case a >= 10:
		return fmt.Sprintf("%.1f ms", v)
	default:
		return fmt.Sprintf("%.3f ms", v)
	}
}
