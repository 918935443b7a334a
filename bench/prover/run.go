package proverbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
)

// DefaultSizes are the porep-synth targets the comparison runs by default.
var DefaultSizes = []int{1 << 16, 1 << 18, 1 << 20}

// GnarkReport mirrors the JSON object that bench/gnark prints (its Report
// type; the two modules share no code, so the field tags are the contract).
type GnarkReport struct {
	Gnark         string          `json:"gnark"`
	GOMAXPROCS    int             `json:"gomaxprocs"`
	NumCPU        int             `json:"numcpu"`
	Constraints   int             `json:"constraints"`
	Public        int             `json:"public"`
	Secret        int             `json:"secret"`
	Internal      int             `json:"internal"`
	SetupCached   bool            `json:"setup_cached"`
	Setup         time.Duration   `json:"setup_ns"`
	KeyLoad       time.Duration   `json:"key_load_ns"`
	Solve         []time.Duration `json:"solve_ns"`
	Prove         []time.Duration `json:"prove_ns"`
	Total         []time.Duration `json:"total_ns"`
	Verified      int             `json:"verified"`
	Proofs        int             `json:"proofs"`
	KeyCacheError string          `json:"key_cache_error,omitempty"`
}

// Size is one size's measurements from both sides; RSS are peak resident
// set sizes of each side's process in bytes (0: not measured).
type Size struct {
	Ours     *OursReport
	OursRSS  int64
	Gnark    *GnarkReport
	GnarkRSS int64
}

// Result is a whole comparison run.
type Result struct {
	Procs  int // GOMAXPROCS of both sides
	NumCPU int
	Runs   int
	Sizes  []Size
}

// Option configures Run.
type Option func(*config) error

type config struct {
	sizes    []int
	runs     int
	rounds   int
	procs    int
	keyDir   string
	ours     []string
	gnarkDir string
	gnarkBin string
	log      *slog.Logger
}

// WithSizes sets the porep-synth targets (default DefaultSizes).
func WithSizes(sizes ...int) Option {
	return func(c *config) error {
		if len(sizes) == 0 {
			return errors.New("WithSizes: no size")
		}
		c.sizes = sizes
		return nil
	}
}

// WithRuns sets the timed proofs per side and size, after one warm-up (default 3).
func WithRuns(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("WithRuns(%d): want at least 1", n)
		}
		c.runs = n
		return nil
	}
}

// WithRounds runs each size's two sides n times, alternating (cuzk, gnark,
// cuzk, …), and pools the samples, so that load from other work on the
// machine falls on both sides alike (default 1). Each round has its own
// warm-up proof.
func WithRounds(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("WithRounds(%d): want at least 1", n)
		}
		c.rounds = n
		return nil
	}
}

// WithProcs sets GOMAXPROCS for both sides (default: this process's).
func WithProcs(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("WithProcs(%d): want at least 1", n)
		}
		c.procs = n
		return nil
	}
}

// WithKeyDir sets the key cache of both sides ("": no cache; default devkeys.Dir).
func WithKeyDir(dir string) Option {
	return func(c *config) error { c.keyDir = dir; return nil }
}

// WithOursCommand sets the command that runs cuzk's side of one size: it is
// called with OursMain's flags appended and must behave as OursMain
// (default: this executable with the argument "ours").
func WithOursCommand(argv ...string) Option {
	return func(c *config) error {
		if len(argv) == 0 {
			return errors.New("WithOursCommand: empty command")
		}
		c.ours = argv
		return nil
	}
}

// WithGnarkModule sets the directory of the bench/gnark module, built with
// the go command found in PATH (default "bench/gnark").
func WithGnarkModule(dir string) Option {
	return func(c *config) error { c.gnarkDir = dir; return nil }
}

// WithGnarkBinary uses a prebuilt bench/gnark program instead of building
// the module (for hosts without the go command or the module cache).
func WithGnarkBinary(path string) Option {
	return func(c *config) error { c.gnarkBin = path; return nil }
}

// WithLogger sets where progress goes (default: discarded).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return errors.New("WithLogger: nil logger")
		}
		c.log = l
		return nil
	}
}

// Run builds the gnark side, then for each size runs cuzk's side and
// gnark's side one after the other, each as its own process with the same
// GOMAXPROCS, and collects their reports and peak memory. A size whose
// proofs do not all verify is an error. Run is not meant to share the
// machine: other load skews both sides.
func Run(ctx context.Context, opts ...Option) (*Result, error) {
	cfg := config{sizes: DefaultSizes, runs: 3, rounds: 1, procs: runtime.GOMAXPROCS(0), keyDir: devkeys.Dir(),
		gnarkDir: "bench/gnark", log: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, fmt.Errorf("prover bench: %w", err)
		}
	}
	if cfg.ours == nil {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("prover bench: %w", err)
		}
		cfg.ours = []string{exe, "ours"}
	}
	work, err := os.MkdirTemp("", "cuzk-proverbench")
	if err != nil {
		return nil, fmt.Errorf("prover bench: %w", err)
	}
	defer os.RemoveAll(work) // exports and the gnark binary only
	if cfg.gnarkBin == "" {
		cfg.gnarkBin = filepath.Join(work, "gnark-bench")
		if err := buildGnark(ctx, cfg.gnarkDir, cfg.gnarkBin); err != nil {
			return nil, err
		}
	}
	res := &Result{Procs: cfg.procs, NumCPU: runtime.NumCPU(), Runs: cfg.runs * cfg.rounds}
	for _, target := range cfg.sizes {
		s, err := runSize(ctx, &cfg, target, work)
		if err != nil {
			return res, fmt.Errorf("prover bench %s: %w", SizeString(target), err)
		}
		res.Sizes = append(res.Sizes, s)
	}
	return res, nil
}

func buildGnark(ctx context.Context, dir, out string) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("build gnark side: %w", err)
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", abs, ".")
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build gnark side in %s: %w: %s", dir, err, msg)
	}
	return nil
}

// runSize runs cfg.rounds rounds of both sides at target and pools them.
func runSize(ctx context.Context, cfg *config, target int, work string) (Size, error) {
	var s Size
	for round := range cfg.rounds {
		r, err := runRound(ctx, cfg, target, work, round)
		if err != nil {
			return s, err
		}
		if round == 0 {
			s = r
			continue
		}
		pool(&s, r)
	}
	return s, checkSize(s)
}

// runRound runs cuzk's side, which exports the circuit, then gnark's side
// on that export.
func runRound(ctx context.Context, cfg *config, target int, work string, round int) (Size, error) {
	export := filepath.Join(work, fmt.Sprintf("porep-synth-%d.czr1", target))
	defer os.Remove(export) // large; the gnark side has read it by then
	s := Size{Ours: new(OursReport), Gnark: new(GnarkReport)}
	runs := strconv.Itoa(cfg.runs)
	cfg.log.Info("cuzk side", "constraints", target, "round", round+1, "runs", cfg.runs, "gomaxprocs", cfg.procs)
	argv := append(append([]string(nil), cfg.ours...), "-target", strconv.Itoa(target),
		"-runs", runs, "-keys", cfg.keyDir, "-export", export)
	var err error
	if s.OursRSS, err = child(ctx, cfg.procs, s.Ours, argv...); err != nil {
		return s, fmt.Errorf("cuzk side: %w", err)
	}
	cfg.log.Info("gnark side", "constraints", target, "round", round+1, "runs", cfg.runs, "gomaxprocs", cfg.procs)
	argv = []string{cfg.gnarkBin, "-in", export, "-keys", cfg.keyDir, "-runs", runs}
	if s.GnarkRSS, err = child(ctx, cfg.procs, s.Gnark, argv...); err != nil {
		return s, fmt.Errorf("gnark side: %w", err)
	}
	return s, nil
}

// pool adds round r's samples and proof counts to s and keeps the larger
// peak memory; setup figures stay those of the first round.
func pool(s *Size, r Size) {
	o, q := s.Ours, r.Ours
	o.Synthesis, o.Quotient = append(o.Synthesis, q.Synthesis...), append(o.Quotient, q.Quotient...)
	o.MSMA, o.MSMB1 = append(o.MSMA, q.MSMA...), append(o.MSMB1, q.MSMB1...)
	o.MSMB2, o.MSMLH = append(o.MSMB2, q.MSMB2...), append(o.MSMLH, q.MSMLH...)
	o.Prove = append(o.Prove, q.Prove...)
	o.Proofs, o.Verified = o.Proofs+q.Proofs, o.Verified+q.Verified
	g, h := s.Gnark, r.Gnark
	g.Solve, g.Prove, g.Total = append(g.Solve, h.Solve...), append(g.Prove, h.Prove...), append(g.Total, h.Total...)
	g.Proofs, g.Verified = g.Proofs+h.Proofs, g.Verified+h.Verified
	s.OursRSS, s.GnarkRSS = max(s.OursRSS, r.OursRSS), max(s.GnarkRSS, r.GnarkRSS)
}

// checkSize rejects reports that disagree on the circuit or whose proofs
// did not all verify.
func checkSize(s Size) error {
	o, g := s.Ours, s.Gnark
	var errs []error
	if o.Verified != o.Proofs || g.Verified != g.Proofs {
		errs = append(errs, fmt.Errorf("proofs verified: cuzk %d of %d, gnark %d of %d", o.Verified, o.Proofs, g.Verified, g.Proofs))
	}
	if g.Constraints != o.Constraints || g.Public != o.Public || g.Secret+g.Internal != o.Private {
		errs = append(errs, fmt.Errorf("circuits differ: cuzk %d constraints, %d public, %d private; gnark %d, %d, %d",
			o.Constraints, o.Public, o.Private, g.Constraints, g.Public, g.Secret+g.Internal))
	}
	if g.GOMAXPROCS != o.GOMAXPROCS {
		errs = append(errs, fmt.Errorf("GOMAXPROCS differ: cuzk %d, gnark %d", o.GOMAXPROCS, g.GOMAXPROCS))
	}
	return errors.Join(errs...)
}

// OursMain is the entry point of cuzk's side as a child process: it parses
// -target, -runs, -keys, -export, -seed and -setup-seed, runs MeasureOurs
// and prints its report as JSON on stdout. It returns the exit status.
func OursMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("ours", stderr)
	var cfg OursConfig
	fs.IntVar(&cfg.Target, "target", 1<<16, "porep-synth target constraints")
	fs.IntVar(&cfg.Runs, "runs", 3, "timed proofs after one warm-up")
	fs.StringVar(&cfg.KeyDir, "keys", devkeys.Dir(), "key cache directory (\"\": none)")
	fs.StringVar(&cfg.Export, "export", "", "write the circuit for the gnark side here")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "witness and blinding seed")
	fs.Uint64Var(&cfg.SetupSeed, "setup-seed", 1, "development setup seed")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	rep, err := MeasureOurs(ctx, cfg)
	if err == nil {
		err = writeJSON(stdout, rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "ours: %v\n", err)
		return 1
	}
	return 0
}
