package loadbench

import "syscall"

// peakRSS is this process's peak resident set size (getrusage's
// ru_maxrss, which Linux reports in KiB); 0 where it cannot be read.
func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0 // only reported
	}
	return ru.Maxrss * 1024
}
