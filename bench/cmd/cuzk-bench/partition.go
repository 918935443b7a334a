package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cuzk-dev/cuzk/bench/gpubench"
	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/internal/cli"
	"github.com/cuzk-dev/cuzk/internal/report"
	"github.com/cuzk-dev/cuzk/internal/stats"
	"github.com/cuzk-dev/cuzk/prover/gpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

const partitionSummary = `Proves one Groth16 partition with groth16.Prove on the GPU backend, with a
synthetic key shaped like a Filecoin PoRep C2 partition (32 GiB sector: about
130 M constraints in a 2^27 domain, about as many wires): QuotientH over
2^-log, the MSMs A, B in G1 and B in G2 over the wires, and one MSM over L‖H
(the private wires and the quotient's 2^-log − 1 coefficients; the key's L
and H are adjacent, as Setup and ReadFrom make them). The backend's calls
run one after another, each timed.

Bases are -tile random points tiled (timing does not depend on repeats);
a, b are random and c = a·b pointwise, as for a satisfied circuit. Wire
values are random field elements, or, with -bits f, a random bit (0 or 1)
for a fraction f of them: a real C2 witness is mostly the bits of its
SHA-256 gadgets, and the MSMs' cost follows the non-zero digits. The memory
needed is printed first, and the job is refused before any allocation if it
does not fit the GPU's free memory or the host's. With -pinned all (the
default) a, b, c and Prove's workspace (the buffer wires ‖ h, which holds
the L‖H scalars) are in the backend's pinned host memory, as a GPU worker
holds them (synthesis into pinned buffers, r1cs.WithBuffers, and a pinned
groth16.Workspace; see cuzk-bench prove), so that their uploads need no
staging; -pinned scalars pins only the workspace, -pinned none pins nothing.
With -h-on-device (the default) Prove fuses the quotient and the L‖H MSM
into one call (groth16.QuotientLHBackend): h stays on the GPU, the private
wires go up during the quotient's last transforms, and that call comes first
while the A and B wires go up during its L‖H MSM (groth16.Prefetcher). The B
MSMs in G1 and G2 are one call (groth16.BPairBackend): one upload, one sort.
The warm-up then proves both ways, and the fused run's L‖H and proof must
equal the host path's. The key has no trapdoor, so its proofs cannot be
verified: the warm-up's results are checked instead, every MSM against
gnark-crypto's MultiExp on the scalars folded to the tile (exact), the
quotient by h(ζ)·Z(ζ) = a(ζ)·b(ζ) − c(ζ) at a random ζ. The default run needs
about 122 GiB of GPU and 98 GiB of host memory and takes about two minutes on
an H200 host (16 cores, 128 GiB RAM), much of it generating and uploading
~75 GB of bases.`

func partitionCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet(prog, "partition", "[flags]", partitionSummary, stderr)
	logN := fs.Int("log", 27, "log2 of the evaluation domain (QuotientH size, H MSM 2^log − 1 points)")
	wires := fs.Int("wires", 0, "wires of the A MSM, L has one less (0: 31/32 of 2^log, about a PoRep C2 partition)")
	bFrac := fs.Float64("b-frac", 1, "fraction of the wires in the B MSMs (G1 and G2)")
	runs := fs.Int("runs", 2, "timed runs after the warm-up run")
	seed := fs.Uint64("seed", 1, "seed of the random bases and vectors")
	tile := fs.String("tile", "2^16", "distinct random points tiled into the bases")
	check := fs.Bool("check", true, "check the warm-up results against gnark-crypto")
	bits := fs.Float64("bits", 0, "fraction of the wire values that are random bits (0 or 1); the rest are random field elements")
	hOnDevice := fs.Bool("h-on-device", true, "the quotient and the L‖H MSM in one call, h kept on the GPU (false: h through the host)")
	pinned := fs.String("pinned", "all", "vectors in pinned host memory: none, scalars (Prove's workspace: every MSM's scalars), all (also a, b, c)")
	if code, stop := parseFlags(fs, args, stdout); stop {
		return code
	}
	cfg, err := partitionFlags(*logN, *wires, *bFrac, *tile)
	if err == nil && (*bits < 0 || *bits > 1) {
		err = fmt.Errorf("-bits %v: want [0, 1]", *bits)
	}
	if err == nil {
		err = checkRuns(*runs)
	}
	if err == nil {
		if cfg.Pin, err = gpubench.ParsePinSet(*pinned); err != nil {
			err = fmt.Errorf("-pinned %q: want one of %s", *pinned, strings.Join(gpubench.PinNames, ", "))
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "cuzk-bench partition: %v\n", err)
		return exitUsage
	}
	cfg.Runs, cfg.Seed, cfg.Check, cfg.Bits, cfg.HOnDevice = *runs, *seed, *check, *bits, *hOnDevice
	return exitFor(stderr, "partition", runPartition(ctx, cfg, stdout))
}

func partitionFlags(logN, wires int, bFrac float64, tile string) (gpubench.PartitionConfig, error) {
	var cfg gpubench.PartitionConfig
	if logN < 2 || logN > 27 {
		return cfg, fmt.Errorf("-log %d: want 2 … 27", logN)
	}
	if wires == 0 {
		wires = (1 << logN) / 32 * 31
	}
	if wires < 2 || wires > 1<<28 {
		return cfg, fmt.Errorf("-wires %d: want 2 … 2^28", wires)
	}
	if bFrac <= 0 || bFrac > 1 {
		return cfg, fmt.Errorf("-b-frac %v: want (0, 1]", bFrac)
	}
	if lh := wires - 1 + 1<<logN - 1; lh > 1<<28 {
		return cfg, fmt.Errorf("-wires %d: the L‖H MSM would have %d points, the MSM engine takes at most 2^28", wires, lh)
	}
	t, err := stats.ParseCount(tile)
	if err != nil || t < 2 {
		return cfg, fmt.Errorf("-tile: %v (want ≥ 2)", err)
	}
	cfg.Shape = gpubench.Shape{Log: logN, Wires: wires, BWires: max(1, int(float64(wires)*bFrac))}
	cfg.Tile = t
	return cfg, nil
}

func runPartition(ctx context.Context, cfg gpubench.PartitionConfig, w io.Writer) error {
	dev, err := gpubench.OpenGPU()
	if err != nil {
		return err
	}
	defer dev.Close() // nothing left to report after the results
	fmt.Fprintln(w, dev.Info())
	var free int64
	if err := dev.Do(func(c *driver.Ctx) (err error) { free, _, err = c.MemInfo(); return err }); err != nil {
		return fmt.Errorf("device memory: %w", err)
	}
	plan, err := gpubench.PlanMemory(cfg.Shape)
	if err != nil {
		return err
	}
	host := gpubench.HostAvailable()
	s := cfg.Shape
	fmt.Fprintf(w, "partition 2^%d: %d wires (%d in B)\n", s.Log, s.Wires, s.BWires)
	printMemPlan(w, s, plan, free, host)
	if err := gpubench.CheckFit(plan, free, host); err != nil {
		return err
	}
	be, err := gpu.New(dev)
	if err != nil {
		return err
	}
	start := time.Now()
	p, err := gpubench.NewPartition(cfg, be)
	if err != nil {
		return errors.Join(err, be.Close())
	}
	fmt.Fprintf(w, "inputs: %s tiles tiled to the key, random a, b, c = a·b, wires (%.0f %% bits), pinned: %s, in %s\n",
		stats.FormatCount(cfg.Tile), 100*cfg.Bits, cfg.Pin, stats.MsSig(time.Since(start)))
	// be.Close frees the pinned inputs: nothing reads them after the runs.
	res, err := gpubench.RunPartition(ctx, cfg, p, be)
	err = errors.Join(err, be.Close())
	if res != nil {
		printPartition(w, p.PK, res)
	}
	return err
}

// printMemPlan writes the plan as a table, with what is free beside it.
func printMemPlan(w io.Writer, s gpubench.Shape, p gpubench.MemPlan, devFree, hostAvail int64) {
	t := report.NewTable("memory", "items", "size")
	t.Add("G1 bases (A, B, L‖H)", fmt.Sprintf("%d+%d+%d", s.Wires, s.BWires, s.LH()), stats.FormatGiB(p.BasesG1))
	t.Add("G2 bases (B)", fmt.Sprint(s.BWires), stats.FormatGiB(p.BasesG2))
	t.Add("QuotientH vectors + twiddles", fmt.Sprintf("3×2^%d", s.Log), stats.FormatGiB(p.Quotient))
	t.Add("MSM scratch (largest MSM)", "-", stats.FormatGiB(p.Scratch))
	t.Add("device total", "-", stats.FormatGiB(p.Device()))
	t.Add("device free now", "-", stats.FormatGiB(devFree))
	t.Add("host: bases, a, b, c, wires, Prove's workspace", "-", stats.FormatGiB(p.Host))
	hostCell := "unknown"
	if hostAvail > 0 {
		hostCell = stats.FormatGiB(hostAvail)
	}
	t.Add("host available now", "-", hostCell)
	t.Write(w)
}

// printPartition writes the warm-up's time and the runs' medians per phase,
// with each phase's check.
func printPartition(w io.Writer, pk *groth16.ProvingKey, res *gpubench.PartitionResult) {
	if res.Warmup > 0 {
		fmt.Fprintf(w, "warm-up run (bases upload included): %s\n", stats.MsSig(res.Warmup))
	}
	if len(res.Runs) == 0 {
		return
	}
	cols := []string{fmt.Sprintf("phase (median of %d)", len(res.Runs)), "wall", "MSM device", "MSM upload", "c"}
	cols = append(cols, gpubench.StageName[:]...)
	t := report.NewTable(append(cols, "check")...)
	ps := &res.Phases
	for ph := range gpubench.NumPhases {
		if res.Points[ph] == 0 {
			continue
		}
		row := []string{phaseLabel(ph, res.Points[ph]), stats.MsSig(ps.Wall[ph].Median())}
		if ph == gpubench.PhQuotient {
			for range 3 + gpubench.NumStages {
				row = append(row, "-")
			}
		} else {
			row = append(row, stats.MsSig(ps.Compute[ph].Median()), stats.MsSig(ps.Upload[ph].Median()), fmt.Sprint(res.Bits[ph]))
			for i := range gpubench.NumStages {
				row = append(row, stats.MsSig(ps.Stage[ph][i].Median()))
			}
		}
		t.Add(append(row, checkCell(res.Checks[ph]))...)
	}
	total := []string{"total GPU work (groth16.Prove, calls one after another)", stats.MsSig(res.Runs.Median()),
		stats.MsSig(gpubench.SumMSMs(&ps.Compute).Median()), stats.MsSig(gpubench.SumMSMs(&ps.Upload).Median()), ""}
	for i := range gpubench.NumStages {
		total = append(total, stats.MsSig(gpubench.SumStage(&ps.Stage, i).Median()))
	}
	t.Add(append(total, "")...)
	t.Write(w)
	// With h on the GPU the timed runs have no L‖H MSM of their own; the
	// warm-up ran and checked it on the host path.
	for ph := range gpubench.NumPhases {
		if res.Points[ph] == 0 && res.Checks[ph] != "" {
			fmt.Fprintf(w, "warm-up, h through the host: %s %s\n", gpubench.PhaseShort[ph], res.Checks[ph])
		}
	}
}

func checkCell(s string) string {
	if s == "" {
		return "not checked"
	}
	return s
}
