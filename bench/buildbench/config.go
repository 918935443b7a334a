package buildbench

import (
	"cmp"
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

// Config is one sequence run's settings; its zero value runs the
// defaults. Run checks it and names the field of a bad value.
type Config struct {
	// Archs are the SASS targets the sequence builds (nil: DefaultArchs).
	// Changing them changes every ActionID, as it should.
	Archs []string
	// Flag is the nvcc flag the flag-change step adds ("": DefaultFlag).
	Flag string
	// Jobs is how many nvcc runs each builder may run at once (0: the
	// number of CPUs, for both).
	Jobs int
	// Ninja is the ninja binary ("": ninja on PATH).
	Ninja string
	// Layout is the tree layout (zero: kbuild.DefaultLayout).
	Layout kbuild.Layout
	// NoOpRuns is how many no-op engine builds are timed (0: 15).
	NoOpRuns int
	// Log is where progress is logged (nil: nowhere).
	Log *slog.Logger
}

// validate rejects values no default stands for.
func (c Config) validate() error {
	var errs []error
	if c.Archs != nil && len(c.Archs) == 0 {
		errs = append(errs, errors.New("Config.Archs: no archs (nil: the default)"))
	}
	if c.Flag != "" && !strings.HasPrefix(c.Flag, "-") {
		errs = append(errs, fmt.Errorf("Config.Flag %q does not start with -", c.Flag))
	}
	if c.Jobs < 0 {
		errs = append(errs, fmt.Errorf("Config.Jobs %d < 0", c.Jobs))
	}
	if c.NoOpRuns < 0 {
		errs = append(errs, fmt.Errorf("Config.NoOpRuns %d < 0", c.NoOpRuns))
	}
	if !isZeroLayout(c.Layout) && (c.Layout.Kernels == "" || c.Layout.Out == "") {
		errs = append(errs, errors.New("Config.Layout needs Kernels and Out"))
	}
	return errors.Join(errs...)
}

func isZeroLayout(l kbuild.Layout) bool {
	return l.Kernels == "" && l.Out == "" && len(l.Includes) == 0
}

// withDefaults checks c, fills in the defaults of its zero fields and finds
// the ninja binary.
func (c Config) withDefaults() (Config, error) {
	if err := c.validate(); err != nil {
		return c, fmt.Errorf("buildbench: %w", err)
	}
	if c.Archs == nil {
		c.Archs = DefaultArchs
	} else {
		c.Archs = append([]string(nil), c.Archs...)
	}
	c.Flag, c.Ninja = cmp.Or(c.Flag, DefaultFlag), cmp.Or(c.Ninja, "ninja")
	c.Jobs, c.NoOpRuns = cmp.Or(c.Jobs, runtime.NumCPU()), cmp.Or(c.NoOpRuns, 15)
	if isZeroLayout(c.Layout) {
		c.Layout = kbuild.DefaultLayout
	}
	if c.Log == nil {
		c.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	p, err := exec.LookPath(c.Ninja)
	if err != nil {
		return c, fmt.Errorf("buildbench: ninja: %w (Debian package ninja-build)", err)
	}
	c.Ninja = p
	return c, nil
}

// dirs are the tree directories the sequence copies and touches.
func (c Config) dirs() []string { return append([]string{c.Layout.Kernels}, c.Layout.Includes...) }
