//go:build !linux

package progress

import "os"

// isTerminal takes a character device for a terminal where the terminal
// driver is not asked (systems other than Linux).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
