package proverbench

import (
	"os"
	"syscall"
)

// maxRSS is the child's peak resident set size: getrusage's ru_maxrss,
// which Linux reports in KiB.
func maxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss * 1024
	}
	return 0
}
