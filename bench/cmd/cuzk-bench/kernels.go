package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cuzk-dev/cuzk/bench/gpubench"
	"github.com/cuzk-dev/cuzk/internal/cli"
	"github.com/cuzk-dev/cuzk/internal/report"
	"github.com/cuzk-dev/cuzk/internal/stats"
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
(its time is the "table build" column). With -link, first a table of the
host-to-device rate from each kind of host memory a key may stream from
(pinned by the driver, anonymous registered, a file mapped and registered
read-only), each checked by reading its last copy back. Default sizes take about 1-2 minutes
on an H200 host (16 cores, 128 GiB RAM, 141 GB GPU).`

// kernelsConfig holds the kernels command's flags.
type kernelsConfig struct {
	gpubench.KernelsConfig
	frRate    float64             // Fr muls per second; 0: measure
	link      gpubench.LinkConfig // Bytes 0: no link table
	rateElems int                 // elements of the fr_mul_chain measurement
}

func kernelsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet(prog, "kernels", "[flags]", kernelsSummary, stderr)
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
	streamed := fs.String("g1-streamed", "", "MSM G1 sizes run again with their bases streamed from page-locked host memory in chunks of -stream-chunk (\"\": none)")
	streamChunk := fs.String("stream-chunk", "2^24", "points a chunk of a streamed MSM")
	batch := fs.Int("batch", 1, "above 1: -g1-streamed's sizes again as batches of this many scalar vectors over the same bases, each chunk sent once")
	link := fs.String("link", "", "bytes sent host to device from each kind of host memory a key may stream from, e.g. 8GiB (\"\": none)")
	linkChunk := fs.String("link-chunk", "768MiB", "bytes a copy of -link (a G1 stream chunk of 2^23 points is 768 MiB)")
	linkDir := fs.String("link-dir", os.TempDir(), "directory of -link's file-mapped row (a file of -link bytes, removed afterwards)")
	if code, stop := parseFlags(fs, args, stdout); stop {
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
	cfg.Runs, cfg.Seed, cfg.frRate, cfg.rateElems = *runs, *seed, *rate*1e9, 1<<22
	cfg.Tables = int64(*tables * (1 << 30))
	if cfg.Streamed, err = parseLogList(*streamed); err == nil {
		slices.Sort(cfg.Streamed)
		cfg.StreamChunk, err = stats.ParseCount(*streamChunk)
	}
	if err == nil && (cfg.StreamChunk < 1 || slices.ContainsFunc(cfg.Streamed, func(l int) bool { return l < 1 || l > 28 })) {
		err = fmt.Errorf("-g1-streamed %q, -stream-chunk %q: want sizes 2^1 … 2^28 and a chunk ≥ 1", *streamed, *streamChunk)
	}
	if err == nil && (*batch < 1 || *batch > 16) {
		err = fmt.Errorf("-batch %d: want 1 … 16", *batch)
	}
	cfg.Batch = *batch
	if err == nil && *link != "" {
		cfg.link.Bytes, err = stats.ParseBytes(*link)
		if err == nil {
			cfg.link.Chunk, err = stats.ParseBytes(*linkChunk)
		}
		if err == nil && (cfg.link.Chunk < 1 || cfg.link.Chunk > cfg.link.Bytes) {
			err = fmt.Errorf("-link %s, -link-chunk %s: want 0 < chunk ≤ bytes", *link, *linkChunk)
		}
		cfg.link.Runs, cfg.link.Dir, cfg.link.Seed = *runs, *linkDir, *seed
	}
	if err != nil {
		fmt.Fprintf(stderr, "cuzk-bench kernels: %v\n", err)
		return exitUsage
	}
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
	cfg.G1, cfg.G2, cfg.NTT = parse(g1, "g1", 28), parse(g2, "g2", 28), parse(ntt, "ntt", gpu.MaxLogN)
	var err error
	if cfg.Tile, err = stats.ParseCount(tile); err != nil || cfg.Tile < 2 {
		errs = append(errs, fmt.Errorf("-tile: %v (want ≥ 2)", err))
	}
	if cfg.DirectMax, err = stats.ParseCount(direct); err != nil {
		errs = append(errs, fmt.Errorf("-direct-check: %w", err))
	}
	return cfg, errors.Join(errs...)
}

func runKernels(ctx context.Context, cfg kernelsConfig, w io.Writer) error {
	dev, err := gpubench.OpenGPU()
	if err != nil {
		return err
	}
	defer dev.Close() // nothing left to report after the results
	fmt.Fprintln(w, dev.Info())
	if cfg.link.Bytes > 0 {
		rows, err := gpubench.Link(dev, cfg.link)
		printLinkRows(w, rows, cfg.link)
		if err != nil || len(cfg.G1)+len(cfg.G2)+len(cfg.Streamed)+len(cfg.NTT) == 0 {
			return err
		}
	}
	rate := gpubench.FixedMulRate(cfg.frRate, "given by -fr-rate")
	if cfg.frRate <= 0 {
		if rate, err = gpubench.Rate(ctx, dev, cfg.rateElems, cfg.Seed); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "modmul rate: %s\n", rate.Source)
	fmt.Fprintf(w, "MSM bases: %s distinct random points (gnark-crypto) tiled to each size; scalars uniform random\n",
		stats.FormatCount(cfg.Tile))
	var rows []gpubench.KernelRow
	var errs []error
	if len(cfg.G1)+len(cfg.G2)+len(cfg.Streamed) > 0 { // the streamed sizes alone too
		r, err := gpubench.MSMs(ctx, dev, cfg.KernelsConfig, rate)
		rows, errs = append(rows, r...), append(errs, err)
	}
	if len(cfg.NTT) > 0 {
		bw, err := gpubench.MeasureBandwidth(dev, 256<<20, 5)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		fmt.Fprintf(w, "pinned copies (256 MiB, CUDA events): H2D %.1f GB/s, D2H %.1f GB/s\n", bw.H2D/1e9, bw.D2H/1e9)
		r, err := gpubench.NTTs(ctx, dev, cfg.KernelsConfig, rate)
		rows, errs = append(rows, r...), append(errs, err)
	}
	printKernelRows(w, rows, cfg.Runs)
	return errors.Join(errs...)
}

func printLinkRows(w io.Writer, rows []gpubench.LinkRow, cfg gpubench.LinkConfig) {
	fmt.Fprintf(w, "host to device: %s from each kind of host memory in copies of %s into two device buffers in turn, %d runs after a warm-up (CUDA events around all the copies)\n",
		stats.FormatBytes(cfg.Bytes), stats.FormatBytes(cfg.Chunk), cfg.Runs)
	t := report.NewTable("host memory", "median", "slowest", "fastest", "huge pages")
	gbs := func(r float64) string { return fmt.Sprintf("%.1f GB/s", r/1e9) }
	for _, r := range rows {
		huge := "not found"
		if r.HugeBytes >= 0 {
			huge = fmt.Sprintf("%s of %s", stats.FormatBytes(r.HugeBytes), stats.FormatBytes(r.MapBytes))
		}
		t.Add(r.Source, gbs(r.Median), gbs(r.Min), gbs(r.Max), huge)
	}
	t.Write(w)
	fmt.Fprintln(w, "THP:", thpSetting())
}

// thpSetting is the kernel's transparent huge page mode, as the kernel
// prints it ("always [madvise] never"), or why it is not known.
func thpSetting() string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return err.Error()
	}
	return strings.TrimSpace(string(b))
}

func printKernelRows(w io.Writer, rows []gpubench.KernelRow, runs int) {
	t := report.NewTable("kernel", "size", "c", "copies", "device", "transfers", "end-to-end", "modmul est.", "dev/est",
		"sppark H200", "table build", "check")
	for _, r := range rows {
		bits, copies, build, sppark := "-", "-", "-", "-"
		if r.Bits > 0 {
			bits, copies = fmt.Sprint(r.Bits), fmt.Sprint(r.Copies)
		}
		if r.Build > 0 {
			build = stats.MsSig(r.Build)
		}
		if r.Sppark > 0 {
			sppark = msf(r.Sppark)
		}
		timed := func(d time.Duration) string { // a row stopped before its timed runs has none
			if r.Device == 0 {
				return ""
			}
			return stats.MsSig(d)
		}
		t.Add(r.Kernel, fmt.Sprintf("2^%d", r.LogN), bits, copies, timed(r.Device), timed(r.Transfer), timed(r.E2E),
			timed(r.Est), ratio(r.Device, r.Est), sppark, build, r.Check)
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

// parseLogList reads a comma-separated list of sizes (stats.ParseCount) that
// must be powers of two and returns their logs.
func parseLogList(s string) ([]int, error) {
	var logs []int
	for _, f := range strings.Split(s, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		n, err := stats.ParseCount(f)
		if err != nil {
			return nil, err
		}
		if n&(n-1) != 0 {
			return nil, fmt.Errorf("size %q: want a power of two", f)
		}
		logs = append(logs, stats.Log2(n))
	}
	return logs, nil
}
