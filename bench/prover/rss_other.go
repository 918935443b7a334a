//go:build !linux

package proverbench

import "os"

// maxRSS is not measured off Linux (ru_maxrss units differ by system).
func maxRSS(*os.ProcessState) int64 { return 0 }
