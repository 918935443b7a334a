// Package shquote quotes words for a POSIX shell.
package shquote

import "strings"

// Quote returns s in single quotes for /bin/sh, each ' written '\”:
// the shell reads it back as exactly s, whatever it holds. Safe for
// concurrent use (a pure function).
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
