package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/internal/report"
	"github.com/cuzk-dev/cuzk/prover/gpu"
)

const kernelsSummary = `Times the GPU kernels: MSM in G1 and G2 and the Fr NTT, each after a warm-up,
median of -runs. "device" is the GPU time with the inputs resident (CUDA
events), "end-to-end" the wall time of one call with
its transfers (scalars or vector from host memory through pinned staging
chunks, results back). Beside each: a modmul-bound estimate (field
multiplications the algorithm does, times the GPU's multiplication rate,
measured with the fr_mul_chain selftest kernel unless -fr-rate is given) and
sppark's figures on an H200.

Every result is checked once against gnark-crypto on the CPU: NTTs element
for element; MSMs against gnark's MultiExp, on the full input up to
-direct-check points and beyond that on the scalars folded to the tile (bases
are -tile distinct random points repeated, so Σ s_i·P_(i mod T) =
Σ_j (Σ_(i≡j) s_i)·P_j: exact, and milliseconds even at 2^26). Every timed MSM run
must also return the warm-up's result. With -msm-tables the MSM engine builds
tables of base multiples (gpu.MSM.SetTableMemory) for each size in the warm-up
(its time is the "table build" column). Default sizes take about 1-2 minutes
on an H200 host (16 cores, 128 GiB RAM, 141 GB GPU).`

// kernelsConfig holds the kernels command's flags.
type kernelsConfig struct {
	g1, g2, ntt []int // sizes, log2
	runs        int
	seed        uint64
	tile        int
	directMax   int     // largest MSM checked on the full input
	frRate      float64 // Fr muls per second; 0: measure
	tables      int64   // MSM table memory in bytes (gpu.MSM.SetTableMemory); 0: none
	rateElems   int     // elements of the fr_mul_chain measurement
}

func kernelsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("kernels", kernelsSummary, stderr)
	sizes := fs.String("sizes", "", "one size list for every kernel, e.g. 2^20,2^24 (overrides -g1, -g2, -ntt)")
	g1 := fs.String("g1", "2^20,2^22,2^24,2^26", "MSM G1 sizes (\"\": none)")
	g2 := fs.String("g2", "2^20,2^24", "MSM G2 sizes (\"\": none)")
	ntt := fs.String("ntt", "2^20,2^24,2^27", "NTT sizes, at most 2^27 (\"\": none)")
	runs := fs.Int("runs", 10, "timed runs per kernel and size, after one warm-up")
	seed := fs.Uint64("seed", 1, "seed of the random scalars, vectors and bases")
	tile := fs.String("tile", "2^16", "distinct random points tiled into the bases")
	direct := fs.String("direct-check", "2^24", "largest MSM checked on the full input (larger: folded to the tile)")
	rate := fs.Float64("fr-rate", 0, "Fr multiplication rate for the estimates in Gmul/s (0: measure it)")
	tables := fs.Float64("msm-tables", 0, "GiB of GPU memory for MSM tables of base multiples (0: none)")
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	cfg, err := kernelsFlags(*sizes, *g1, *g2, *ntt, *tile, *direct)
	if err == nil {
		err = checkRuns(*runs)
	}
	if err == nil && (*tables < 0 || *tables > 1<<20) {
		err = fmt.Errorf("-msm-tables %v: want 0 … 2^20 GiB", *tables)
	}
	if err != nil {
		fmt.Fprintf(stderr, "cuzk-bench kernels: %v\n", err)
		return exitUsage
	}
	cfg.runs, cfg.seed, cfg.frRate, cfg.rateElems = *runs, *seed, *rate*1e9, 1<<22
	cfg.tables = int64(*tables * (1 << 30))
	return exitFor(stderr, "kernels", runKernels(ctx, cfg, stdout))
}

// kernelsFlags parses and bounds the size flags.
func kernelsFlags(sizes, g1, g2, ntt, tile, direct string) (kernelsConfig, error) {
	if sizes != "" {
		g1, g2, ntt = sizes, sizes, sizes
	}
	var cfg kernelsConfig
	var errs []error
	parse := func(s, what string, maxLog int) []int {
		logs, err := parseLogList(s)
		for _, l := range logs {
			if l < 1 || l > maxLog {
				err = errors.Join(err, fmt.Errorf("2^%d: want 2^1 … 2^%d", l, maxLog))
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("-%s: %w", what, err))
		}
		slices.Sort(logs)
		return slices.Compact(logs)
	}
	cfg.g1, cfg.g2, cfg.ntt = parse(g1, "g1", 28), parse(g2, "g2", 28), parse(ntt, "ntt", gpu.MaxLogN)
	var err error
	if cfg.tile, err = parseSize(tile); err != nil || cfg.tile < 2 {
		errs = append(errs, fmt.Errorf("-tile: %v (want ≥ 2)", err))
	}
	if cfg.directMax, err = parseSize(direct); err != nil {
		errs = append(errs, fmt.Errorf("-direct-check: %w", err))
	}
	return cfg, errors.Join(errs...)
}

// kernelRow is one line of the kernels table.
type kernelRow struct {
	kernel          string
	logN, bits      int
	copies, windows int // MSM table copies read (1: the bases alone), bucket windows
	build           string
	device, e2e     string
	transfer        string
	est, vsEst      string
	sppark, checked string
}

func runKernels(ctx context.Context, cfg kernelsConfig, w io.Writer) error {
	dev, err := openGPU()
	if err != nil {
		return err
	}
	defer dev.Close() // nothing left to report after the results
	fmt.Fprintln(w, dev.Info())
	rate, err := kernelRate(ctx, dev, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "modmul rate: %s\n", rate.source)
	fmt.Fprintf(w, "MSM bases: %s distinct random points (gnark-crypto) tiled to each size; scalars uniform random\n",
		sizeString(cfg.tile))
	var rows []kernelRow
	var errs []error
	if len(cfg.g1)+len(cfg.g2) > 0 {
		r, err := benchMSMs(ctx, dev, cfg, rate)
		rows, errs = append(rows, r...), append(errs, err)
	}
	if len(cfg.ntt) > 0 {
		r, err := benchNTTs(ctx, w, dev, cfg, rate)
		rows, errs = append(rows, r...), append(errs, err)
	}
	printKernelRows(w, rows, cfg.runs)
	return errors.Join(errs...)
}

// kernelRate measures the multiplication rate, or takes -fr-rate, or falls
// back to the recorded H200 figure when the measurement fails for another
// reason than a wrong result.
func kernelRate(ctx context.Context, dev *driver.Device, cfg kernelsConfig) (mulRate, error) {
	if cfg.frRate > 0 {
		return fixedMulRate(cfg.frRate, "given by -fr-rate"), nil
	}
	rate, err := measureMulRate(ctx, dev, cfg.rateElems, cfg.seed)
	if errors.Is(err, errMismatch) {
		return rate, err
	}
	if err != nil {
		return fixedMulRate(fallbackFrRate, fmt.Sprintf("recorded H200 selftest figure (measuring failed: %v)", err)), nil
	}
	return rate, nil
}

func printKernelRows(w io.Writer, rows []kernelRow, runs int) {
	t := report.NewTable("kernel", "size", "c", "copies", "device", "transfers", "end-to-end", "modmul est.", "dev/est",
		"sppark H200", "table build", "check")
	for _, r := range rows {
		bits, copies, build := "-", "-", r.build
		if r.bits > 0 {
			bits, copies = fmt.Sprint(r.bits), fmt.Sprint(r.copies)
		}
		if build == "" {
			build = "-"
		}
		t.Add(r.kernel, fmt.Sprintf("2^%d", r.logN), bits, copies, r.device, r.transfer, r.e2e, r.est, r.vsEst, r.sppark,
			build, r.checked)
	}
	fmt.Fprintf(w, "medians of %d runs after a warm-up\n", runs)
	t.Write(w)
	fmt.Fprint(w, `MSM: device = digits to window sums (CUDA events), bases resident; transfers = scalar upload
  through pinned staging (host wall time); end-to-end = the whole call, host window combine included.
NTT: device = natural-order transform of a resident vector (gpu.Backend.TimeNTT, CUDA events);
  end-to-end = gpu.Backend.NTT (upload through pinned staging, transform, download); transfers =
  end-to-end − device: the vector's staging copies both ways.
modmul est.: MSM n·⌈256/c⌉ mixed additions (10 Fp muls) + 2 full additions (14) per bucket (2^(c−1)
  per bucket window: ⌈256/c⌉ windows, or one with a full table), G2 ×3 (Fp2); NTT (n/2)·log2 n Fr
  muls; divided by the rate above. dev/est > 1: slower than the estimate.
copies: the MSM table's copies of the bases (1: none); table build = their upload and build, once.
`)
}

// equalG1 and equalG2 compare results as group elements.
func equalG1(a, b *bls12381.G1Jac) bool { return a.Equal(b) }
func equalG2(a, b *bls12381.G2Jac) bool { return a.Equal(b) }
