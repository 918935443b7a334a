package kbuild

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/cuzk-dev/cuzk/toolchain"
	"github.com/cuzk-dev/cuzk/toolchain/cas"
)

// Layout says where a tree keeps its kernel sources and outputs, relative
// to the root.
type Layout struct {
	Kernels  string   // one unit per .cu file directly under this directory
	Includes []string // include path, in -I order
	Out      string   // where fatbins and the manifest are materialized
}

// DefaultLayout is cuzk's own tree.
var DefaultLayout = Layout{Kernels: "cuda/kernels", Includes: []string{"cuda/include"}, Out: "cuda/fatbin"}

// Engine is the kernel build engine: it builds the kernel units of one tree.
// (The module has three other engines: the daemon's job engine, the Dagger
// engine ci drives, and the ProvingEngine gRPC service; docs/architecture.md
// tells them apart.)
type Engine struct {
	root      string
	layout    Layout
	pins      toolchain.Pins
	tc        toolchain.Local
	store     *cas.Store
	jobs      int
	progress  io.Writer
	debug     io.Writer
	verify    bool
	remote    cas.Cache
	fetchJobs int
	compiler  *compiler
	remoteOK  remoteHealth
	tickEvery time.Duration
	prog      *progress
	// norandomize runs nvcc with ASLR off (see noRandomize).
	norandomize noRandomize
}

// Option configures an Engine; bad values are rejected by New.
type Option func(*Engine) error

// WithLayout sets the tree layout (default DefaultLayout).
func WithLayout(l Layout) Option {
	return func(e *Engine) error {
		if l.Kernels == "" || l.Out == "" {
			return errors.New("kbuild: layout needs Kernels and Out")
		}
		e.layout = l
		return nil
	}
}

// WithJobs bounds parallel nvcc runs (default: the number of CPUs).
func WithJobs(n int) Option {
	return func(e *Engine) error {
		if n < 1 {
			return fmt.Errorf("kbuild: jobs %d < 1", n)
		}
		e.jobs = n
		return nil
	}
}

// WithProgress sets where one line per unit is printed (default: nowhere),
// with a line when nvcc starts a kernel and, while it runs, its elapsed
// time: a status line rewritten in place where w is a terminal, else a
// plain line every WithProgressInterval.
func WithProgress(w io.Writer) Option {
	return func(e *Engine) error { e.progress = w; return nil }
}

// WithDebugHash prints every line fed to every key to w (CUZK_DEBUGHASH=1).
func WithDebugHash(w io.Writer) Option {
	return func(e *Engine) error { e.debug = w; return nil }
}

// WithVerify rebuilds cache hits and fails if the bytes differ (CUZK_VERIFY=1).
func WithVerify(v bool) Option {
	return func(e *Engine) error { e.verify = v; return nil }
}

// WithRemote adds a shared cache, looked up after the local store and
// before nvcc; a remote hit is written to the local store, and what nvcc
// builds is stored there too unless it is read-only (cas.ReadOnly). A
// remote that does not answer costs one warning line; the build goes on
// without it.
func WithRemote(c cas.Cache) Option {
	return func(e *Engine) error { e.remote = c; return nil }
}

// WithFetchJobs bounds parallel remote fetches (default 8).
func WithFetchJobs(n int) Option {
	return func(e *Engine) error {
		if n < 1 {
			return fmt.Errorf("kbuild: fetch jobs %d < 1", n)
		}
		e.fetchJobs = n
		return nil
	}
}

// WithCompiler sets how nvcc is found when a unit must be compiled: find
// runs at most once per Build, on the first miss (it may install the
// toolchain), and a build served wholly from the caches never calls it.
// The toolchain it returns must have the identity the keys were made with.
func WithCompiler(find func(ctx context.Context) (toolchain.Local, error)) Option {
	return func(e *Engine) error {
		if find == nil {
			return errors.New("kbuild: nil compiler finder")
		}
		e.compiler = &compiler{find: find}
		return nil
	}
}

// New returns an engine for the tree at root whose keys hold tc's identity,
// building with tc.Nvcc (which must be the pinned one) or, when tc has no
// nvcc, with what WithCompiler finds, into store.
func New(root string, pins toolchain.Pins, tc toolchain.Local, store *cas.Store, opts ...Option) (*Engine, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("kbuild: root %s: %w", root, err)
	}
	if store == nil {
		return nil, errors.New("kbuild: nil store")
	}
	e := &Engine{root: abs, layout: DefaultLayout, pins: pins, tc: tc, store: store,
		jobs: runtime.NumCPU(), progress: io.Discard, fetchJobs: 8, tickEvery: DefaultProgressInterval}
	for _, o := range opts {
		if err := o(e); err != nil {
			return nil, err
		}
	}
	e.prog = newProgress(e.progress, e.tickEvery)
	if e.compiler == nil {
		if tc.Nvcc == "" {
			return nil, errors.New("kbuild: no nvcc in the toolchain and no WithCompiler")
		}
		e.compiler = &compiler{find: func(context.Context) (toolchain.Local, error) { return tc, nil }}
	}
	return e, nil
}

// Plan discovers every unit and computes its key, without building. It is
// the engine's whole no-op cost: read and hash the sources, nothing else.
func (e *Engine) Plan(ctx context.Context) ([]Unit, error) {
	dir := filepath.Join(e.root, e.layout.Kernels)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("kbuild: list kernels: %w", err)
	}
	sc := newScanner(e.root, e.layout.Includes)
	var units []Unit
	for _, ent := range ents {
		if ent.IsDir() || !strings.HasSuffix(ent.Name(), ".cu") {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		u, err := e.unit(sc, strings.TrimSuffix(ent.Name(), ".cu"))
		if err != nil {
			return nil, err
		}
		units = append(units, u)
	}
	if len(units) == 0 {
		return nil, fmt.Errorf("kbuild: no .cu files in %s", dir)
	}
	sort.Slice(units, func(i, j int) bool { return units[i].Name < units[j].Name })
	return units, nil
}

func (e *Engine) unit(sc *scanner, name string) (Unit, error) {
	source := filepath.ToSlash(filepath.Join(e.layout.Kernels, name+".cu"))
	inputs, err := sc.closure(filepath.Join(e.root, filepath.FromSlash(source)))
	if err != nil {
		return Unit{}, fmt.Errorf("kbuild: kernel %s: %w", name, err)
	}
	args := nvccArgs(e.pins, e.layout.Includes, OutPlaceholder, source)
	lines := keyLines(e.tc.Identity, e.pins, e.root, args, inputs)
	return Unit{Name: name, Source: source, Inputs: inputs, Args: args, Lines: lines,
		ID: hashLines(lines, e.debug, name)}, nil
}

// refName names the reference to a unit's last build in this tree.
func (e *Engine) refName(u Unit) string { return "kbuild " + e.root + " " + u.Source }
