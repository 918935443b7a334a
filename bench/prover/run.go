package proverbench

import (
	"cmp"
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

// Config is one comparison run's settings; its zero value runs the
// defaults. Run checks it and names the field of a bad value.
type Config struct {
	// Sizes are the porep-synth targets (nil: DefaultSizes).
	Sizes []int
	// Runs is the timed proofs per side and size, after one warm-up (0: 3).
	Runs int
	// Rounds runs each size's two sides that many times, alternating (cuzk,
	// gnark, cuzk, …), and pools the samples, so that load from other work
	// on the machine falls on both sides alike (0: 1). Each round has its
	// own warm-up proof.
	Rounds int
	// Procs is GOMAXPROCS for both sides (0: this process's).
	Procs int
	// KeyDir is the key cache of both sides ("": devkeys.Dir); NoKeyCache
	// runs both sides without one.
	KeyDir     string
	NoKeyCache bool
	// OursCommand runs cuzk's side of one size: it is called with
	// OursMain's flags appended and must behave as OursMain (nil: this
	// executable with the argument "ours").
	OursCommand []string
	// GnarkModule is the directory of the bench/gnark module, built with
	// the go command found in PATH ("": "bench/gnark").
	GnarkModule string
	// GnarkBinary is a prebuilt bench/gnark program used instead of
	// building the module (for hosts without the go command or the module
	// cache).
	GnarkBinary string
	// Log is where progress goes (nil: discarded).
	Log *slog.Logger
}

// validate rejects negative counts and an empty size list or command given
// as non-nil.
func (c Config) validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		n    int
	}{{"Runs", c.Runs}, {"Rounds", c.Rounds}, {"Procs", c.Procs}} {
		if f.n < 0 {
			errs = append(errs, fmt.Errorf("Config.%s %d: want at least 1 (0: the default)", f.name, f.n))
		}
	}
	if c.Sizes != nil && len(c.Sizes) == 0 {
		errs = append(errs, errors.New("Config.Sizes: no size (nil: the default)"))
	}
	if c.OursCommand != nil && len(c.OursCommand) == 0 {
		errs = append(errs, errors.New("Config.OursCommand: empty command (nil: the default)"))
	}
	return errors.Join(errs...)
}

// withDefaults checks c and fills in the defaults of its zero fields.
func (c Config) withDefaults() (Config, error) {
	if err := c.validate(); err != nil {
		return c, err
	}
	if c.Sizes == nil {
		c.Sizes = DefaultSizes
	}
	c.Runs, c.Rounds, c.Procs = cmp.Or(c.Runs, 3), cmp.Or(c.Rounds, 1), cmp.Or(c.Procs, runtime.GOMAXPROCS(0))
	switch {
	case c.NoKeyCache:
		c.KeyDir = ""
	case c.KeyDir == "":
		c.KeyDir = devkeys.Dir()
	}
	c.GnarkModule = cmp.Or(c.GnarkModule, "bench/gnark")
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.OursCommand == nil {
		exe, err := os.Executable()
		if err != nil {
			return c, err
		}
		c.OursCommand = []string{exe, "ours"}
	}
	return c, nil
}

// Run builds the gnark side, then for each size runs cuzk's side and
// gnark's side one after the other, each as its own process with the same
// GOMAXPROCS, and collects their reports and peak memory. A size whose
// proofs do not all verify is an error. Run is not meant to share the
// machine: other load skews both sides.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("prover bench: %w", err)
	}
	work, err := os.MkdirTemp("", "cuzk-proverbench")
	if err != nil {
		return nil, fmt.Errorf("prover bench: %w", err)
	}
	defer os.RemoveAll(work) // exports and the gnark binary only
	if cfg.GnarkBinary == "" {
		cfg.GnarkBinary = filepath.Join(work, "gnark-bench")
		if err := buildGnark(ctx, cfg.GnarkModule, cfg.GnarkBinary); err != nil {
			return nil, err
		}
	}
	res := &Result{Procs: cfg.Procs, NumCPU: runtime.NumCPU(), Runs: cfg.Runs * cfg.Rounds}
	for _, target := range cfg.Sizes {
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

// runSize runs cfg.Rounds rounds of both sides at target and pools them.
func runSize(ctx context.Context, cfg *Config, target int, work string) (Size, error) {
	var s Size
	for round := range cfg.Rounds {
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
func runRound(ctx context.Context, cfg *Config, target int, work string, round int) (Size, error) {
	export := filepath.Join(work, fmt.Sprintf("porep-synth-%d.czr1", target))
	defer os.Remove(export) // large; the gnark side has read it by then
	s := Size{Ours: new(OursReport), Gnark: new(GnarkReport)}
	runs := strconv.Itoa(cfg.Runs)
	cfg.Log.Info("cuzk side", "constraints", target, "round", round+1, "runs", cfg.Runs, "gomaxprocs", cfg.Procs)
	argv := append(append([]string(nil), cfg.OursCommand...), "-target", strconv.Itoa(target),
		"-runs", runs, "-keys", cfg.KeyDir, "-export", export)
	var err error
	if s.OursRSS, err = child(ctx, cfg.Procs, s.Ours, argv...); err != nil {
		return s, fmt.Errorf("cuzk side: %w", err)
	}
	cfg.Log.Info("gnark side", "constraints", target, "round", round+1, "runs", cfg.Runs, "gomaxprocs", cfg.Procs)
	argv = []string{cfg.GnarkBinary, "-in", export, "-keys", cfg.KeyDir, "-runs", runs}
	if s.GnarkRSS, err = child(ctx, cfg.Procs, s.Gnark, argv...); err != nil {
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
