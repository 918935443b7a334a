package main

import (
	"fmt"
	"time"

	"github.com/cuzk-dev/cuzk/internal/stats"
)

// msf formats a time in milliseconds given as a float.
func msf(v float64) string { return stats.MsSig(time.Duration(v * float64(time.Millisecond))) }

// ratio formats a/b as a speed-up, "-" when either is missing.
func ratio(a, b time.Duration) string {
	if a <= 0 || b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fx", float64(a)/float64(b))
}
