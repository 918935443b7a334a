//go:build mage

package main

import (
	"os"
	"strings"

	"github.com/cuzk-dev/cuzk/internal/progress"
)

func join(s []string) string { return strings.Join(s, "; ") }

// during reports the step what on stdout while it runs (a line after 10 s without one,
// a live line on a terminal) and returns the ticker; Stop it when the step
// ends.
func during(what string) *progress.Ticker { return progress.Start(os.Stdout, what) }
