// Command cuzk-daemon is cuzk's GPU Groth16 proving daemon.
//
//	cuzk-daemon serve [flags]     the gRPC proving service (see serve -help)
//	cuzk-daemon version [-json]   version and commit, the pins that built the embedded kernels, their hashes
//	cuzk-daemon selftest [-n N]   run the field kernels on the GPU against gnark-crypto
//	cuzk-daemon import-key IN OUT convert a proving key (<name>.pk) into the raw key file the daemon maps
//	cuzk-daemon keys ls|rm|verify the key directory: list, delete (development keys; -force for others), check every file
//
// Exit status: 0 success, 1 failure, 2 usage, 3 no GPU (or no kernels) here;
// serve: 130 or 143 when a second SIGINT or SIGTERM cancelled running jobs.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes.
const (
	exitOK      = 0
	exitFail    = 1
	exitUsage   = 2
	exitNoGPU   = 3
	usageFormat = "usage: %s serve [flags] | version [-json] | selftest [-n elements] [-seed S] | import-key <name>.pk <name>.rawpk | keys ls|rm|verify\n"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, usageFormat, "cuzk-daemon")
		return exitUsage
	}
	if len(args) > 1 && isHelp(args[1:]) {
		args = []string{args[0], "-h"} // every subcommand's help: usage on stdout, exit 0
	}
	switch args[0] {
	case "version":
		return versionCmd(args[1:], stdout, stderr)
	case "serve":
		return serveCmd(args[1:], stdout, stderr)
	case "selftest":
		return selftestCmd(ctx, args[1:], stdout, stderr)
	case "import-key":
		return importKeyCmd(args[1:], stdout, stderr)
	case "keys":
		return keysCmd(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		if len(args) > 1 && args[0] == "help" {
			return run(ctx, []string{args[1], "-h"}, stdout, stderr)
		}
		fmt.Fprintf(stdout, usageFormat, "cuzk-daemon")
		return exitOK
	default:
		fmt.Fprintf(stderr, "cuzk-daemon: unknown command %q\n"+usageFormat, args[0], "cuzk-daemon")
		return exitUsage
	}
}

// newFlags returns a flag set for the subcommand name whose usage (a
// line, then the flags) goes to fs.Output(), stderr unless help was asked.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: cuzk-daemon %s %s\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// isHelp reports whether args ask for help: "help" alone, or -h, -help or
// --help before any "--".
func isHelp(args []string) bool {
	if len(args) == 1 && args[0] == "help" {
		return true
	}
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// parseFlags parses args into fs. Help prints fs's usage on stdout and
// returns exitOK, a bad flag exitUsage (the flag package printed why on
// stderr); ok is true when the subcommand should go on.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) (code int, ok bool) {
	if isHelp(args) {
		out := fs.Output()
		fs.SetOutput(stdout)
		fs.Usage()
		fs.SetOutput(out)
		return exitOK, false
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage, false
	}
	return exitOK, true
}
