package buildbench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"syscall"
	"time"

	"github.com/cuzk-dev/cuzk/toolchain"
	"github.com/cuzk-dev/cuzk/toolchain/cas"
	"github.com/cuzk-dev/cuzk/toolchain/kbuild"
)

// Side is one builder's figures for one step.
type Side struct {
	Nvcc int           // compiler runs
	Wall time.Duration // the build's wall time, process or engine start included
	CPU  time.Duration // user+system time of the build's child processes (nvcc, ninja)
}

// Step is one row of the comparison.
type Step struct {
	Name    string
	Changed int  // units whose inputs differ from the previous step's
	Min     int  // units in a state never built before: the least any builder must compile
	Cuzk    Side // the kernel engine
	Ninja   Side
	Differ  []string // units whose fatbins differ between the trees after the step (their own paths aside)
}

// Result is a whole benchmark.
type Result struct {
	Archs      []string
	Jobs       int
	Units      []string
	Picks      Picks
	Steps      []Step
	EngineNoOp Timing  // a no-op kbuild Build of the copied tree
	MageNoOp   *Timing // `go run mage.go build` with nothing to do; nil when not measured
	CacheDir   string  // the kbuild side's cache (removed with the work directory)
	// Remote holds the remote cache rows (MeasureRemote); nil when not measured.
	Remote *RemoteResult
}

// bench is one run's state: two trees, their counters and the oracle.
type bench struct {
	cfg        Config
	cuzk       *cuzkTree
	ninja      *ninjaTree
	cuzkCount  counter
	ninjaCount counter
	oracle     *oracle
	res        Result
}

// Run copies the kernel tree at src into work twice and runs the scripted
// sequence on both copies, with the pins narrowed to the configured archs.
// It needs the pinned nvcc and ninja, and takes as long as the compiles it
// measures.
func Run(ctx context.Context, src, work string, pins toolchain.Pins, cfg Config) (Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	b, err := setup(ctx, cfg, src, work, pins)
	if err != nil {
		return Result{}, err
	}
	if err := b.sequence(ctx); err != nil {
		return b.res, err
	}
	b.res.EngineNoOp, err = b.engineNoOp(ctx)
	return b.res, err
}

func setup(ctx context.Context, cfg Config, src, work string, pins toolchain.Pins) (*bench, error) {
	pins.Archs, pins.PTX = cfg.Archs, nil
	if err := pins.Validate(); err != nil {
		return nil, fmt.Errorf("buildbench: %w", err)
	}
	real, err := exec.LookPath(pins.CUDA.Nvcc)
	if err != nil {
		return nil, fmt.Errorf("buildbench: %w: %v", toolchain.ErrNoNvcc, err)
	}
	b := &bench{cfg: cfg, oracle: newOracle(), res: Result{Archs: cfg.Archs, Jobs: cfg.Jobs}}
	// The trees' absolute paths have equal lengths: nvcc embeds the
	// directory in line info (-lineinfo), and sameOutputs swaps one path for
	// the other before comparing bytes.
	roots := []string{filepath.Join(work, "tree", "k"), filepath.Join(work, "tree", "n")}
	for _, root := range roots {
		if err := copyLayout(src, root, cfg.dirs()); err != nil {
			return nil, fmt.Errorf("buildbench: %w", err)
		}
	}
	if b.cuzkCount, err = newCounter(filepath.Join(work, "cuzk"), real); err != nil {
		return nil, err
	}
	if b.ninjaCount, err = newCounter(filepath.Join(work, "ninja"), real); err != nil {
		return nil, err
	}
	pins.CUDA.Nvcc = b.cuzkCount.bin
	tc, err := toolchain.Detect(ctx, pins, nil)
	if err != nil {
		return nil, fmt.Errorf("buildbench: %w", err)
	}
	b.res.CacheDir = filepath.Join(work, "cuzk", "cache")
	store, err := cas.Open(b.res.CacheDir)
	if err != nil {
		return nil, fmt.Errorf("buildbench: %w", err)
	}
	b.cuzk = &cuzkTree{root: roots[0], layout: cfg.Layout, pins: pins, tc: tc, store: store, jobs: cfg.Jobs}
	b.ninja = &ninjaTree{root: roots[1], ninja: cfg.Ninja, nvcc: b.ninjaCount.bin, jobs: cfg.Jobs}
	return b, b.regenerate(ctx)
}

// regenerate writes build.ninja from the engine's current plan.
func (b *bench) regenerate(ctx context.Context) error {
	units, err := b.cuzk.plan(ctx)
	if err != nil {
		return fmt.Errorf("buildbench: plan: %w", err)
	}
	b.res.Units = b.res.Units[:0]
	for _, u := range units {
		b.res.Units = append(b.res.Units, u.Name)
	}
	return b.ninja.generate(units)
}

// step applies change to both trees, builds each (the engine first, then
// ninja, never at once), and records the counts, times and the minimum.
func (b *bench) step(ctx context.Context, name string, change func(root string) error) error {
	b.cfg.Log.Info("buildbench step", "step", name)
	if err := settle(b.ninja.root, ninjaOut, 10*time.Second); err != nil {
		return fmt.Errorf("buildbench: step %q: %w", name, err)
	}
	for _, root := range []string{b.cuzk.root, b.ninja.root} {
		if err := change(root); err != nil {
			return fmt.Errorf("buildbench: step %q: %w", name, err)
		}
	}
	s := Step{Name: name}
	var err error
	if s.Cuzk, err = measure(ctx, b.cuzk.build, b.cuzkCount); err != nil {
		return fmt.Errorf("buildbench: step %q: kbuild: %w", name, err)
	}
	if s.Ninja, err = measure(ctx, b.ninja.build, b.ninjaCount); err != nil {
		return fmt.Errorf("buildbench: step %q: %w", name, err)
	}
	deps, err := b.ninja.deps(ctx)
	if err != nil {
		return fmt.Errorf("buildbench: step %q: %w", name, err)
	}
	keys, err := stateKeys(b.ninja.root, b.ninja.cmds, deps)
	if err != nil {
		return fmt.Errorf("buildbench: step %q: %w", name, err)
	}
	s.Changed, s.Min = b.oracle.observe(keys)
	if s.Differ, err = b.differ(); err != nil {
		return fmt.Errorf("buildbench: step %q: %w", name, err)
	}
	b.res.Steps = append(b.res.Steps, s)
	b.cfg.Log.Info("buildbench step done", "step", name, "min", s.Min, "kbuild", s.Cuzk.Nvcc, "ninja", s.Ninja.Nvcc)
	return nil
}

func measure(ctx context.Context, build func(context.Context) error, c counter) (Side, error) {
	if _, err := c.take(); err != nil { // drop anything logged outside a build
		return Side{}, err
	}
	cpu0, err := childCPU()
	if err != nil {
		return Side{}, err
	}
	start := time.Now()
	if err := build(ctx); err != nil {
		return Side{}, err
	}
	wall := time.Since(start)
	cpu1, err := childCPU()
	if err != nil {
		return Side{}, err
	}
	n, err := c.take()
	return Side{Nvcc: n, Wall: wall, CPU: cpu1 - cpu0}, err
}

// childCPU returns the user+system time of this process's finished
// children and their waited-for descendants (nvcc's cicc and ptxas, or
// ninja's nvcc): a compile cost that other load on the machine barely moves.
func childCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// differ compares every unit's fatbin across the two trees, with the
// engine tree's absolute path (which -lineinfo embeds) read as ninja's, and
// returns the units whose bytes differ.
func (b *bench) differ() ([]string, error) {
	kroot, nroot := []byte(b.cuzk.root), []byte(b.ninja.root)
	var out []string
	for _, name := range b.res.Units {
		x, err := os.ReadFile(filepath.Join(b.cuzk.root, filepath.FromSlash(path.Join(b.cfg.Layout.Out, name+".fatbin"))))
		if err != nil {
			return nil, fmt.Errorf("read kbuild output: %w", err)
		}
		y, err := os.ReadFile(filepath.Join(b.ninja.root, ninjaOut, name+".fatbin"))
		if err != nil {
			return nil, fmt.Errorf("read ninja output: %w", err)
		}
		if !bytes.Equal(bytes.ReplaceAll(x, kroot, nroot), y) {
			out = append(out, name)
		}
	}
	return out, nil
}

// cuzkTree drives the kernel engine over its copy of the tree, with a fresh
// engine per build as each `mage build` process makes one.
type cuzkTree struct {
	root   string
	layout kbuild.Layout
	pins   toolchain.Pins
	tc     toolchain.Local
	store  *cas.Store
	jobs   int
	last   kbuild.Report
}

func (c *cuzkTree) engine() (*kbuild.Engine, error) {
	return kbuild.New(c.root, c.pins, c.tc, c.store, kbuild.WithLayout(c.layout), kbuild.WithJobs(c.jobs))
}

func (c *cuzkTree) build(ctx context.Context) error {
	e, err := c.engine()
	if err != nil {
		return err
	}
	c.last, err = e.Build(ctx)
	return err
}

func (c *cuzkTree) plan(ctx context.Context) ([]kbuild.Unit, error) {
	e, err := c.engine()
	if err != nil {
		return nil, err
	}
	return e.Plan(ctx)
}
