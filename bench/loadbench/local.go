package loadbench

import (
	"context"
	"errors"
	"fmt"
	"github.com/cuzk-dev/cuzk/daemon/assembly"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/client"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
)

// local is a daemon started in this process on a unix socket in a
// temporary directory, and a client dialled to it: what both benchmarks
// measure.
type local struct {
	dir    string
	keyDir string // the daemon's key directory
	d      *assembly.Daemon
	c      *client.Client
}

// startLocal starts a daemon with opts, its listeners set here (no HTTP)
// and, when opts.KeyDir is "", its keys in the temporary directory.
func startLocal(opts assembly.Config, log *slog.Logger) (*local, error) {
	dir, err := os.MkdirTemp("", "cuzk-loadbench-")
	if err != nil {
		return nil, err
	}
	opts.Listen, opts.HTTPListen = "unix:"+filepath.Join(dir, "d.sock"), ""
	if opts.KeyDir == "" {
		opts.KeyDir = filepath.Join(dir, "keys")
	}
	d, err := assembly.Start(opts, log)
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	c, err := client.Dial([]string{d.Addr()}, client.Config{})
	if err != nil {
		d.Stop()
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	return &local{dir: dir, keyDir: opts.KeyDir, d: d, c: c}, nil
}

// stop closes the client, stops the daemon and removes the directory.
func (l *local) stop() {
	_ = l.c.Close() // the measurement is over; nothing to report
	l.d.Stop()
	_ = os.RemoveAll(l.dir)
}

// preload makes circ's key warm and hot, and returns its description and
// the time that took.
func (l *local) preload(ctx context.Context, circ *registry.Resolved) (*pb.KeyInfo, time.Duration, error) {
	start := time.Now()
	k, err := l.c.PreloadKey(ctx, &pb.KeyRequest{Circuit: &pb.Circuit{Id: circ.Def.ID, Params: circ.Params}})
	if err != nil {
		return nil, 0, fmt.Errorf("preload: %w", err)
	}
	return k, time.Since(start), nil
}
