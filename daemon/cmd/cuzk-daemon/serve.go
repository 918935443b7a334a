package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/cuzk-dev/cuzk/daemon/assembly"
	"github.com/cuzk-dev/cuzk/daemon/server"
	"github.com/cuzk-dev/cuzk/internal/cli"
)

// tokenHint says how to give serve its token, after ErrExposedWithoutToken
// (the container image listens on all interfaces, so it needs one).
const tokenHint = `cuzk-daemon serve: give it a token: -token-file FILE or CUZK_DAEMON_TOKEN_FILE=FILE (a mounted secret),
  or CUZK_DAEMON_TOKEN=TOKEN; clients send "authorization: Bearer TOKEN" (the client cuzk reads $CUZK_DAEMON_TOKEN)
`

// serveCmd runs the proving service until SIGTERM or SIGINT: the first
// signal drains (running jobs finish, new ones are refused), a second one
// cancels every job and exits with 128 + the signal's number (130 for
// SIGINT, 143 for SIGTERM), as a shell reports a process a signal ended.
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
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	defer signal.Stop(sig)
	d, err := assembly.Start(opts, log)
	if err != nil {
		fmt.Fprintln(stderr, "cuzk-daemon serve:", err)
		if errors.Is(err, server.ErrExposedWithoutToken) {
			fmt.Fprint(stderr, tokenHint)
		}
		return exitFail
	}
	select {
	case err := <-d.Errors():
		log.Error("listener failed", "err", err)
		d.Stop()
		return exitFail
	case s := <-sig:
		log.Info("signal: draining (a second signal cancels running jobs)", "signal", s.String(), "timeout", opts.DrainTimeout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.DrainTimeout)
	defer cancel()
	second := make(chan int, 1) // the exit status a second signal asks for
	go func() {
		select {
		case s := <-sig:
			log.Warn("second signal: cancelling running jobs", "signal", s.String())
			second <- signalExit(s)
			d.Stop()
		case <-ctx.Done():
		}
	}()
	err = d.Drain(ctx)
	cancel()
	select {
	case code := <-second:
		log.Warn("stopped by a second signal: running jobs were cancelled", "exit", code)
		return code
	default:
	}
	if err != nil {
		log.Warn("drain incomplete", "err", err)
		return exitFail
	}
	return exitOK
}

// signalExit is the conventional exit status of a process a signal ended.
func signalExit(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return exitFail
}
