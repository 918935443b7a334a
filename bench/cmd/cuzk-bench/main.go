// Command cuzk-bench measures cuzk's Groth16 prover end to end and kernel by
// kernel, on the CPU (gnark-crypto) and GPU backends, and checks every result
// against gnark-crypto. It holds benchmarks only: the client of a running
// daemon is cuzk (daemon/cmd/cuzk).
//
//	cuzk-bench prove     porep-synth proofs per backend: per-phase medians,
//	                     pairing check of every proof, GPU proof = CPU proof
//	cuzk-bench kernels   MSM G1/G2 and NTT on the GPU: device and end-to-end
//	                     medians beside a modmul-bound estimate and sppark's
//	                     figures on an H200
//	cuzk-bench partition groth16.Prove of one PoRep C2-sized partition with a
//	                     synthetic key on the GPU: the quotient and every MSM
//	cuzk-bench synth     synthesis of porep-synth alone, sequential and on every
//	                     core, the two checked equal
//	cuzk-bench keys      the development setup of porep-synth with the key
//	                     points on the GPU (-gpu) or CPU, split into
//	                     fixed-base G1, G2 and the rest
//	cuzk-bench daemon    a daemon started in the process, driven over gRPC:
//	                     throughput, latency, busy ratio, overhead per proof
//	cuzk-bench c2        C2-sized proofs (10 partitions) through a daemon
//	                     started in the process, the key made at start
//	cuzk-bench soak      many small operations against a daemon started in
//	                     the process: RSS and goroutines back to their level
//	cuzk-bench version   this binary's version, commit and Go release
//
// Run "cuzk-bench <command> -help" for the flags of each command. Timings are
// medians over -runs runs after one warm-up run. The benchmarks' logic lives
// in bench/gpubench (runs, phases, memory plans, kernel timings) and
// bench/benchinput (inputs and references); this command parses the
// flags and prints the results.
//
// Exit status: 0 success, 1 failure (an error, a proof that does not verify,
// a GPU result that differs from gnark-crypto), 2 usage, 3 a GPU was needed
// and there is none (or the binary embeds no kernels).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/cuzk-dev/cuzk/bench/gpubench"
	"github.com/cuzk-dev/cuzk/internal/buildinfo"
	"github.com/cuzk-dev/cuzk/internal/cli"
)

// prog is this command's name in its messages.
const prog = "cuzk-bench"

// Exit codes: cli's, and 3 when a GPU was needed and there is none.
const (
	exitOK    = cli.ExitOK
	exitFail  = cli.ExitFail
	exitUsage = cli.ExitUsage
	exitNoGPU = 3
)

const usage = `usage: cuzk-bench <command> [flags]

commands:
  prove      prove porep-synth on the CPU and/or GPU backend, per-phase timings,
             verify every proof, check GPU proof == CPU proof byte for byte
  kernels    MSM G1/G2 and NTT kernels on the GPU against a modmul-bound
             estimate and sppark's H200 figures, each result checked once
  partition  GPU work of one 2^27-domain PoRep C2-sized partition (synthetic key)
  keys       development setup of porep-synth, fixed-base G1/G2 on the GPU (-gpu) or CPU
  daemon     a daemon started here, driven over gRPC: throughput, latency, busy ratio
  c2         C2-sized proofs (10 partitions of 2^27) through a daemon started here, key made at start
  synth      synthesis alone (r1cs.Solve of porep-synth), sequential and parallel, checked equal
  soak       10,000 small operations (cancels, deadlines, preload/evict) against a daemon started
             here: RSS and goroutines back to their level
  version    this binary's version, source commit and Go release (-json)

A running daemon's client is cuzk (prove, submit, await, watch, cancel, status, preload, evict, vk).

Run "cuzk-bench <command> -help" or "cuzk-bench help <command>" for a command's flags.
Exit status: 0 ok, 1 failure, 2 usage, 3 no GPU (or no embedded kernels).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	name, args := cli.Subcommand(args)
	switch name {
	case "":
		fmt.Fprint(stderr, usage)
		return exitUsage
	case "prove":
		return proveCmd(ctx, args, stdout, stderr)
	case "daemon":
		return daemonBenchCmd(ctx, args, stdout, stderr)
	case "c2":
		return c2Cmd(ctx, args, stdout, stderr)
	case "soak":
		return soakCmd(ctx, args, stdout, stderr)
	case "kernels":
		return kernelsCmd(ctx, args, stdout, stderr)
	case "partition":
		return partitionCmd(ctx, args, stdout, stderr)
	case "synth":
		return synthCmd(ctx, args, stdout, stderr)
	case "keys":
		return keysCmd(ctx, args, stdout, stderr)
	case "version", "-version", "--version":
		return versionCmd(args, stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	case "status", "preload", "evict", "cancel", "submit", "await", "watch", "vk":
		fmt.Fprintf(stderr, "cuzk-bench: %s is a command of cuzk, the daemon's client: cuzk %s -h\n", name, name)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "cuzk-bench: unknown command %q\n%s", name, usage)
		return exitUsage
	}
}

// versionCmd prints the binary's version, commit and Go release
// (buildinfo.Get; -json: as one JSON object).
func versionCmd(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet(prog, "version", "[flags]", "This binary's version, source commit and Go release.", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object (version, commit, go, module, path, from)")
	if code, stop := parseFlags(fs, args, stdout); stop {
		return code
	}
	info := buildinfo.Get()
	if !*asJSON {
		fmt.Fprintln(stdout, "cuzk-bench", info)
		return exitOK
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(info); err != nil {
		fmt.Fprintln(stderr, "cuzk-bench version:", err)
		return exitFail
	}
	return exitOK
}

// parseFlags parses args into fs (cli.Parse: help on stdout) and refuses
// arguments after the flags: no command of cuzk-bench takes any.
func parseFlags(fs *cli.FlagSet, args []string, stdout io.Writer) (code int, stop bool) {
	if code, stop := cli.Parse(fs, args, stdout); stop {
		return code, true
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s %s: unexpected arguments %q\n", prog, fs.Name(), fs.Args())
		return exitUsage, true
	}
	return exitOK, false
}

// exitFor reports err on stderr under the command's name and returns the
// exit code it calls for.
func exitFor(stderr io.Writer, cmd string, err error) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "cuzk-bench %s: %v\n", cmd, err)
	if errors.Is(err, gpubench.ErrNoGPU) {
		return exitNoGPU
	}
	return exitFail
}
