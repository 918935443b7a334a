//go:build mage

package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/cuzk-dev/cuzk/internal/progress"
)

func join(s []string) string { return strings.Join(s, "; ") }

// during says on stdout that the step what starts, reports it while it
// runs (a line after 10 s without one, a live line on a terminal) and
// returns the ticker; Stop it when the step ends.
func during(what string) *progress.Ticker {
	fmt.Println(what + "…")
	return progress.Start(os.Stdout, what)
}
