// Command cuzk-daemon is cuzk's GPU Groth16 proving daemon.
//
//	cuzk-daemon serve [flags]     the gRPC proving service (see serve -help)
//	cuzk-daemon version [-json]   version and commit, the pins that built the embedded kernels, their hashes
//	cuzk-daemon selftest [-n N]   run the field kernels on the GPU against gnark-crypto
//	cuzk-daemon import-key IN OUT convert a proving key (<name>.pk) into the raw key file the daemon maps
//	cuzk-daemon keys ls|rm|verify the key directory: list, delete (development keys; -force for others), check every file
//
// Exit status: 0 success, 1 failure, 2 usage, 3 no GPU (or no kernels) here;
// serve: 130 or 143 when a second SIGINT or SIGTERM cancelled running jobs;
// SIGHUP is logged and ignored.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/cuzk-dev/cuzk/internal/cli"
)

// prog is this command's name in its messages.
const prog = "cuzk-daemon"

// Exit codes: cli's, and 3 when a GPU was needed and there is none.
const (
	exitOK      = cli.ExitOK
	exitFail    = cli.ExitFail
	exitUsage   = cli.ExitUsage
	exitNoGPU   = 3
	usageFormat = "usage: %s serve [flags] | version [-json] | selftest [-n elements] [-seed S] | import-key <name>.pk <name>.rawpk | keys ls|rm|verify\n"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// Every subcommand's help ("help CMD", or -h, -help, --help or help
	// after it) prints its usage on stdout and exits 0: cli.Parse.
	name, args := cli.Subcommand(args)
	switch name {
	case "":
		fmt.Fprintf(stderr, usageFormat, prog)
		return exitUsage
	case "version":
		return versionCmd(args, stdout, stderr)
	case "serve":
		return serveCmd(args, stdout, stderr)
	case "selftest":
		// Only here: serve takes SIGINT and SIGTERM from the Go runtime
		// (internal/signals), which os/signal would take back.
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		return selftestCmd(ctx, args, stdout, stderr)
	case "import-key":
		return importKeyCmd(args, stdout, stderr)
	case "keys":
		return keysCmd(args, stdout, stderr)
	case "help":
		fmt.Fprintf(stdout, usageFormat, prog)
		return exitOK
	default:
		fmt.Fprintf(stderr, "%s: unknown command %q\n"+usageFormat, prog, name, prog)
		return exitUsage
	}
}
