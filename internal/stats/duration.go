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

// FormatDuration writes d with about three significant digits, in seconds
// from one second up and in milliseconds below: "12.3 s", "1.23 s",
// "123 ms", "12.3 ms", "0.5 ms" (never finer than a tenth of a
// millisecond), for cells that span magnitudes from a kernel to a setup.
func FormatDuration(d time.Duration) string {
	v := d.Seconds()
	switch a := max(v, -v); {
	case a >= 10:
		return fmt.Sprintf("%.1f s", v)
	case a >= 1:
		return fmt.Sprintf("%.2f s", v)
	case a >= 0.1:
		return fmt.Sprintf("%.0f ms", v*1e3)
	default:
		return fmt.Sprintf("%.1f ms", v*1e3)
	}
}
