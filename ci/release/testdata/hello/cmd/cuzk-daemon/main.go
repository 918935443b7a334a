// Command cuzk-daemon stands in for the real daemon in release tests: a pure
// Go main that embeds a kernel manifest as the real one does, so the bundle
// carries one cgo and one non-cgo binary. It uses golang.org/x/sync (from
// the module cache: tests build with GOPROXY=off) so that its build info
// lists a module, as the real daemon's lists grpc.
package main

import (
	_ "embed"
	"os"
	"strconv"

	"golang.org/x/sync/errgroup"
)

//go:embed manifest.json
var manifest string

func main() {
	if len(os.Args) > 1 && os.Args[1] == "manifest" {
		os.Stdout.WriteString(manifest)
		return
	}
	var g errgroup.Group
	g.Go(func() error {
		_, err := os.Stdout.WriteString("daemon " + strconv.Itoa(len(os.Args)) + "\n")
		return err
	})
	if g.Wait() != nil {
		os.Exit(1)
	}
}
