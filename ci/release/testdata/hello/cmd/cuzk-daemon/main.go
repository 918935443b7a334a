// Command cuzk-daemon stands in for the real daemon in release tests: a pure
// Go main that embeds a kernel manifest as the real one does, so the bundle
// carries one cgo and one non-cgo binary.
package main

import (
	_ "embed"
	"os"
	"strconv"
)

//go:embed manifest.json
var manifest string

func main() {
	if len(os.Args) > 1 && os.Args[1] == "manifest" {
		os.Stdout.WriteString(manifest)
		return
	}
	os.Stdout.WriteString("daemon " + strconv.Itoa(len(os.Args)) + "\n")
}
