package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cuzk-dev/cuzk/internal/cli"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile"
)

// importKeyCmd converts a proving key in the compressed encoding into a raw
// key file, checking every point once (keyfile.Import).
func importKeyCmd(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet(prog, "import-key", "<name>.pk <name>.rawpk",
		"Writes the raw key file the daemon maps instead of decoding <name>.pk; every point is checked\n"+
			"on the curve and in the subgroup here, once. Put it beside <name>.vk in the key directory.", stderr)
	if code, stop := cli.Parse(fs, args, stdout); stop {
		return code
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return exitUsage
	}
	src, dst := fs.Arg(0), fs.Arg(1)
	start := time.Now()
	f, err := os.Open(src)
	if err != nil {
		fmt.Fprintf(stderr, "cuzk-daemon: import-key: %v\n", err)
		return exitFail
	}
	defer f.Close() // read-only: Close has nothing to report
	if err := keyfile.Import(dst, f); err != nil {
		fmt.Fprintf(stderr, "cuzk-daemon: import-key %s: %v\n", src, err)
		return exitFail
	}
	fmt.Fprintf(stdout, "wrote %s from %s (points checked) in %s\n", dst, src, time.Since(start).Round(time.Millisecond))
	return exitOK
}
