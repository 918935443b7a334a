// Command cuzk is the client of cuzk's proving daemon (cuzk-daemon): it
// submits proofs and waits for them, watches and cancels jobs, moves keys
// between tiers, and reports the daemon's status.
//
//	cuzk prove   -circuit porep-synth -constraints 2^14        prove and verify; prints the job id
//	cuzk prove   -n 64 -c 16 -addr host1:9820,host2:9820      a load: throughput, latency, phases
//	cuzk submit  -constraints 2^14                             queue a proof, print its job id
//	cuzk await   JOB                                           wait for a job, print its result
//	cuzk watch   JOB                                           stream a job's events
//	cuzk cancel  JOB...                                        cancel jobs
//	cuzk circuits                                              the circuits, their parameters, examples
//	cuzk status | preload | evict | vk | version
//
// Every command takes -o json for scripts, and -h, --help or help for its
// flags; daemon commands take -addr (default $CUZK_ADDR, else
// 127.0.0.1:9820) and -token (default $CUZK_DAEMON_TOKEN, never printed).
// Flags may come before or after the arguments. An error from a daemon
// says what to do next (client.Explain). The commands only parse, call
// daemon/client and print.
//
// Exit status: 0 success, 1 failure (an error, a failed or cancelled job, a
// proof that does not verify), 2 usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/cuzk-dev/cuzk/daemon/client"
	"github.com/cuzk-dev/cuzk/internal/cli"
	"github.com/cuzk-dev/cuzk/internal/progress"
)

// prog is this command's name in its messages.
const prog = "cuzk"

// Exit codes: cli's.
const (
	exitOK    = cli.ExitOK
	exitFail  = cli.ExitFail
	exitUsage = cli.ExitUsage
)

// command is one subcommand: setup declares its flags and returns what runs
// it with the arguments left after them.
type command struct {
	name    string
	args    string // what follows the flags, for the usage line
	summary string // one line in the command list
	detail  string // the help text's body
	daemon  bool   // talks to a daemon: -addr, -token, -timeout, -max-message
	setup   func(fs *flag.FlagSet) runFunc
}

// runFunc runs a command with the arguments left after its flags.
type runFunc func(ctx context.Context, e *env, args []string) error

// env is what a command runs with: out prints its results, and c is the
// connection to the daemons of a daemon command (nil for the others).
type env struct {
	out       *output
	c         *client.Client
	oneDaemon bool // -addr names one daemon: the calls of one job reach the same one
}

// commands are cuzk's subcommands, in the order help lists them.
var commands = []*command{proveCommand, submitCommand, awaitCommand, watchCommand, cancelCommand,
	statusCommand, preloadCommand, evictCommand, vkCommand, circuitsCommand, versionCommand}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	args = cli.CommandFirst(args, func(s string) bool { return lookup(s) != nil }) // cuzk -addr X status
	name, args := cli.Subcommand(args)                                             // "help CMD" is CMD -h
	switch name {
	case "":
		usage(stderr)
		return exitUsage
	case "help":
		usage(stdout)
		return exitOK
	case "-version", "--version":
		name = "version"
	}
	c := lookup(name)
	if c == nil {
		fmt.Fprintf(stderr, "%s: unknown command %q\n\n", prog, name)
		usage(stderr)
		return exitUsage
	}
	return runCommand(ctx, c, args, stdout, stderr)
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// runCommand parses c's flags (-h, -help, --help and a lone "help" print
// its help on stdout: cli.Parse) and runs it.
func runCommand(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet(prog, c.name, "[flags]"+prefixed(" ", c.args), c.detail, stderr)
	fs.HintOnError() // a bad flag: the flag package's message, then where the help is
	var d daemonFlags
	if c.daemon {
		d.add(fs.FlagSet)
	}
	var format string
	fs.StringVar(&format, "o", "text", "output: text, or json for scripts")
	runner := c.setup(fs.FlagSet)
	if code, stop := cli.Parse(fs, args, stdout); stop {
		return code
	}
	out := &output{w: stdout, errw: stderr, json: format == "json"}
	if format != "text" && format != "json" {
		fmt.Fprintf(stderr, "cuzk %s: -o %q: want text or json\n", c.name, format)
		return exitUsage
	}
	err := runWith(ctx, c, &d, runner, &env{out: out}, fs.Args())
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "cuzk %s: %v\n", c.name, err)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "cuzk %s: %v\n", c.name, err)
		return exitFail
	}
}

// runWith runs runner in e, connected to the daemons first for a daemon
// command (a connection only dials at its first call) and bounded by
// -timeout.
func runWith(ctx context.Context, c *command, d *daemonFlags, runner runFunc, e *env, args []string) error {
	if !c.daemon {
		return runner(ctx, e, args)
	}
	cl, ctx, cancel, err := d.dial(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	defer cl.Close() // every answer is in by now; nothing to lose
	e.c = cl
	e.oneDaemon = !strings.Contains(d.addr, ",") && !strings.Contains(d.addr, ":///")
	if !e.out.json && c.name != "prove" { // prove reports its own steps
		// A call can wait long: a key the daemon makes first, a job to end.
		tk := progress.Start(e.out.errw, fmt.Sprintf("cuzk %s: waiting for the daemon at %s", c.name, d.addr))
		defer tk.Stop()
		e.out.mark = tk.Mark
	}
	return client.Explain(runner(ctx, e, args), d.addr)
}

func usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("usage: cuzk <command> [flags] [arguments]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-8s %s\n", c.name, c.summary)
	}
	b.WriteString(`
Daemon commands take -addr ADDR[,ADDR...] (unix:PATH, host:port or dns:///name:port;
default $` + client.EnvAddr + `, else 127.0.0.1:9820) and -token (default $` + client.EnvToken + `).
Every command takes -o json; flags may come before or after arguments.
"cuzk help <command>" or "cuzk <command> -h" shows its flags.
Exit status: 0 ok, 1 failure, 2 usage.
`)
	_, _ = io.WriteString(w, b.String()) // help text: nowhere to report a failed write
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}
