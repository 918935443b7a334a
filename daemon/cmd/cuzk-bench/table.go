package main

import (
	"fmt"
	"time"
)

// ms formats d in milliseconds with three significant digits or so.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	default:
		return fmt.Sprintf("%.3f ms", v)
	}
}

// msf formats a time in milliseconds given as a float.
func msf(v float64) string { return ms(time.Duration(v * float64(time.Millisecond))) }

// ratio formats a/b as a speed-up, "-" when either is missing.
func ratio(a, b time.Duration) string {
	if a <= 0 || b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fx", float64(a)/float64(b))
}

// gib formats a byte count in GiB.
func gib(b int64) string { return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30)) }

// byteSize formats a byte count in the largest binary unit below it.
func byteSize(b int64) string {
	switch {
	case b >= 1<<30:
		return gib(b)
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	default:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
}
