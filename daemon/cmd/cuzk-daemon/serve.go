package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/cuzk-dev/cuzk/daemon/assembly"
	"github.com/cuzk-dev/cuzk/daemon/client"
	"github.com/cuzk-dev/cuzk/daemon/server"
	"github.com/cuzk-dev/cuzk/internal/cli"
	"github.com/cuzk-dev/cuzk/internal/signals"
)

// tokenHint says how to give serve its token, after ErrExposedWithoutToken
// (the container image listens on all interfaces, so it needs one).
const tokenHint = `cuzk-daemon serve: give it a token: -token-file FILE or ` + envPrefix + `TOKEN_FILE=FILE (a mounted secret),
  or ` + client.EnvToken + `=TOKEN; clients send "authorization: Bearer TOKEN" (the client cuzk reads $` + client.EnvToken + `)
`

// serveCmd runs the proving service until SIGTERM or SIGINT: the first
// signal drains (running jobs finish, new ones are refused), a second one
// cancels every job and exits with 128 + the signal's number (130 for
// SIGINT, 143 for SIGTERM), as a shell reports a process a signal ended.
// SIGHUP is logged and ignored (the daemon reloads nothing, and a closed
// terminal must not cost running proofs).
func serveCmd(args []string, stdout, stderr io.Writer) int {
	if cli.IsHelp(args) {
		_, _ = loadConfig([]string{"-h"}, os.Environ(), stdout) // prints the flags; flag.ErrHelp is the expected result
		return exitOK
	}
	opts, err := loadConfig(args, os.Environ(), stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "cuzk-daemon serve:", err)
		return exitUsage
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	// Registered before the start, so that no signal finds the process
	// without a handler. internal/signals, not os/signal: a second SIGTERM
	// that comes while the Go runtime still holds the first (a busy daemon
	// took about a second to) would merge into it.
	sig := make(chan os.Signal, 16)
	if err := signals.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP); err != nil {
		fmt.Fprintln(stderr, "cuzk-daemon serve:", err)
		return exitFail
	}
	defer signals.Stop(sig)
	d, err := assembly.Start(opts, log)
	if err != nil {
		fmt.Fprintln(stderr, "cuzk-daemon serve:", err)
		if errors.Is(err, server.ErrExposedWithoutToken) {
			fmt.Fprint(stderr, tokenHint)
		}
		return exitFail
	}
	return awaitSignals(d, sig, opts.DrainTimeout, log)
}

// daemon is what awaitSignals stops: *assembly.Daemon.
type daemon interface {
	Errors() <-chan error
	Drain(ctx context.Context) error
	Stop()
}

// awaitSignals serves until a listener fails or a signal comes, reading
// sig in a loop for the daemon's whole life, so a second signal is seen
// however soon it follows the first (sig carries every delivery:
// internal/signals): the first SIGTERM or SIGINT drains d
// (up to drainTimeout), the next one stops it at once, SIGHUP is logged and
// ignored. Every way out logs and stops d (which removes a unix socket).
// It returns the exit status.
func awaitSignals(d daemon, sig <-chan os.Signal, drainTimeout time.Duration, log *slog.Logger) int {
	var first os.Signal
	for first == nil {
		select {
		case err := <-d.Errors():
			log.Error("listener failed", "err", err)
			d.Stop()
			return exitFail
		case s := <-sig:
			if ignored(s, log) {
				continue
			}
			first = s
		}
	}
	log.Info("signal: draining (a second signal cancels running jobs)", "signal", first.String(), "timeout", drainTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	drained := make(chan error, 1)
	go func() { drained <- d.Drain(ctx) }()
	for {
		select {
		case err := <-drained:
			if err != nil {
				log.Warn("drain incomplete: running jobs were cancelled", "err", err)
				return exitFail
			}
			return exitOK
		case s := <-sig:
			if ignored(s, log) {
				continue
			}
			log.Warn("second signal: cancelling running jobs", "signal", s.String())
			d.Stop()
			<-drained
			code := signalExit(s)
			log.Warn("stopped by a second signal: running jobs were cancelled", "exit", code)
			return code
		}
	}
}

// ignored logs and reports a signal the daemon does not act on (SIGHUP).
func ignored(s os.Signal, log *slog.Logger) bool {
	if s != syscall.SIGHUP {
		return false
	}
	log.Info("SIGHUP ignored: the daemon reloads nothing; SIGTERM drains it", "signal", s.String())
	return true
}

// signalExit is the conventional exit status of a process a signal ended.
func signalExit(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return exitFail
}
