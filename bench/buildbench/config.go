package buildbench

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"runtime"
	"strings"

	"github.com/cuzk-dev/cuzk/toolchain/kbuild"
)

// DefaultArchs is the target list of the scripted sequence: one SASS arch,
// no PTX. The MSM kernels take minutes per arch to compile on a 2-core
// machine, and every arch multiplies every compile on both sides alike.
var DefaultArchs = []string{"sm_90"}

// DefaultFlag is the flag the flag-change step adds. It is not -lineinfo:
// with -lineinfo nvcc 11.8 embeds the tree's absolute path and the sources'
// modification times in the fatbin, so equal inputs stop giving equal
// bytes and the step's output comparison would mean nothing.
const DefaultFlag = "--extra-device-vectorization"

type config struct {
	archs  []string
	flag   string
	jobs   int
	ninja  string
	layout kbuild.Layout
	noops  int
	log    *slog.Logger
}

// Option configures Run; bad values are rejected there.
type Option func(*config) error

// WithArchs sets the SASS targets the sequence builds (default DefaultArchs).
// Changing them changes every ActionID, as it should.
func WithArchs(archs ...string) Option {
	return func(c *config) error {
		if len(archs) == 0 {
			return errors.New("buildbench: no archs")
		}
		c.archs = append([]string(nil), archs...)
		return nil
	}
}

// WithFlag sets the nvcc flag the flag-change step adds (default DefaultFlag).
func WithFlag(f string) Option {
	return func(c *config) error {
		if !strings.HasPrefix(f, "-") {
			return fmt.Errorf("buildbench: flag %q does not start with -", f)
		}
		c.flag = f
		return nil
	}
}

// WithJobs sets how many nvcc runs each builder may run at once (default:
// the number of CPUs, for both).
func WithJobs(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("buildbench: jobs %d < 1", n)
		}
		c.jobs = n
		return nil
	}
}

// WithNinja sets the ninja binary (default: ninja on PATH).
func WithNinja(path string) Option {
	return func(c *config) error { c.ninja = path; return nil }
}

// WithLayout sets the tree layout (default kbuild.DefaultLayout).
func WithLayout(l kbuild.Layout) Option {
	return func(c *config) error {
		if l.Kernels == "" || l.Out == "" {
			return errors.New("buildbench: layout needs Kernels and Out")
		}
		c.layout = l
		return nil
	}
}

// WithNoOpRuns sets how many no-op engine builds are timed (default 15).
func WithNoOpRuns(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("buildbench: no-op runs %d < 1", n)
		}
		c.noops = n
		return nil
	}
}

// WithLogger sets where progress is logged (default: nowhere).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error { c.log = l; return nil }
}

func newConfig(opts []Option) (config, error) {
	c := config{archs: DefaultArchs, flag: DefaultFlag, jobs: runtime.NumCPU(), ninja: "ninja",
		layout: kbuild.DefaultLayout, noops: 15, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, o := range opts {
		if err := o(&c); err != nil {
			return c, err
		}
	}
	p, err := exec.LookPath(c.ninja)
	if err != nil {
		return c, fmt.Errorf("buildbench: ninja: %w (Debian package ninja-build)", err)
	}
	c.ninja = p
	return c, nil
}

// dirs are the tree directories the sequence copies and touches.
func (c config) dirs() []string { return append([]string{c.layout.Kernels}, c.layout.Includes...) }
