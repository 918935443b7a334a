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

	"github.com/cuzk-dev/cuzk/daemon/server"
)

// serveCmd runs the proving service until SIGTERM or SIGINT: the first
// signal drains (running jobs finish, new ones are refused), a second one
// cancels every job and exits.
func serveCmd(args []string, stderr io.Writer) int {
	opts, err := loadOptions(args, os.Environ(), stderr)
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
	d, err := server.Start(opts, log)
	if err != nil {
		fmt.Fprintln(stderr, "cuzk-daemon serve:", err)
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
	go func() {
		select {
		case s := <-sig:
			log.Warn("second signal: cancelling running jobs", "signal", s.String())
			d.Stop()
		case <-ctx.Done():
		}
	}()
	if err := d.Drain(ctx); err != nil {
		log.Warn("drain incomplete", "err", err)
		return exitFail
	}
	return exitOK
}
