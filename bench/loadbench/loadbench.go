package loadbench

import (
	"context"
	"crypto/rand"
	"fmt"
	"github.com/cuzk-dev/cuzk/daemon/assembly"
	"io"
	"sort"
	"strings"
	"time"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/client"
	"github.com/cuzk-dev/cuzk/internal/report"
	"github.com/cuzk-dev/cuzk/internal/stats"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Config says what to measure.
type Config struct {
	Constraints   uint64 // porep-synth size
	N             int    // proofs per concurrency
	Partitions    int    // partitions per proof (the C2 shape); 0 or 1: single proofs
	Concurrencies []int
	Backend       string // daemon backend: auto, gpu or cpu
	GPUs          []int  // GPU ordinals the daemon uses (nil: all)
	KeyDir        string // "" : a temporary directory
	Synthesizers  int    // 0: one per core
	// Direct compares the daemon with direct calls (CPU backend only: the
	// direct path is Solve + Prove on prover/cpu + Verify).
	Direct bool
	// Critical, when > 0, queues that many NORMAL jobs and then one
	// CRITICAL job, and reports its latency in GPU-job times.
	Critical int
	// MaxOverhead and MinThroughput are the targets checked (0: none).
	MaxOverhead   time.Duration
	MinThroughput float64
	Progress      func(done, total int)
}

// Row is one concurrency's measurement.
type Row struct {
	Concurrency   int
	Report        *client.Report
	Busy          float64            // device busy ratio over the run, averaged over the devices
	BusyPer       map[string]float64 // each device's
	P50, P90, P99 time.Duration
}

// Result is what Run measured.
type Result struct {
	Rows         []Row
	Direct       time.Duration // median Solve + Prove + Verify, direct calls
	Overhead     time.Duration // median of (daemon Prove RPC − direct), input by input
	Pipeline     time.Duration // mean at concurrency 1 of latency − (synthesis + prove + verify): queue, hand-off, transport
	DaemonMean   time.Duration // mean latency at concurrency 1
	CriticalWait time.Duration // CRITICAL job's latency
	GPUJob       time.Duration // mean prove time of a job (one device's work)
	SingleJob    time.Duration // p50 latency of one job alone (concurrency 1): synthesis and proof
	Backend      string
	Device       string
	KeyLoad      time.Duration
	Failures     int
	PeakRSS      int64 // this process's peak resident set (daemon and client), bytes
}

// Run starts a daemon, measures, and stops it.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	circ, err := registry.Default().Resolve("porep-synth", map[string]uint64{"constraints": cfg.Constraints})
	if err != nil {
		return nil, err
	}
	opts := assembly.DefaultConfig()
	opts.Backend, opts.Synthesizers, opts.GPUs, opts.KeyDir = cfg.Backend, cfg.Synthesizers, cfg.GPUs, cfg.KeyDir
	l, err := startLocal(opts, nil)
	if err != nil {
		return nil, err
	}
	defer l.stop()
	c := l.c
	res := &Result{Backend: l.d.Backend()}
	if _, res.KeyLoad, err = l.preload(ctx, circ); err != nil {
		return nil, err
	}
	// Warm-up: one proof (uploads on a GPU, first allocations).
	if _, err := client.RunLoad(ctx, c, client.Load{Circuit: circ, N: 1, Seed: 1 << 40}); err != nil {
		return nil, err
	}
	for _, conc := range cfg.Concurrencies {
		row, err := measure(ctx, c, circ, cfg, conc)
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, row)
		res.Failures += len(row.Report.Failures)
		if conc == 1 {
			res.DaemonMean = stats.Mean(row.Report.Latencies())
			res.SingleJob = row.P50
			pm := row.Report.PhaseMeans()
			res.Pipeline = res.DaemonMean - pm["synthesis"] - pm["prove"] - pm["verify"]
		}
		if res.GPUJob == 0 && len(row.Report.Proofs) > 0 {
			res.GPUJob = row.Report.PhaseMeans()["prove"]
			res.Device = row.Report.Proofs[0].Result.GetDevice()
		}
	}
	if cfg.Critical > 0 {
		if res.CriticalWait, err = critical(ctx, c, circ, cfg.Critical); err != nil {
			return nil, err
		}
	}
	res.PeakRSS = peakRSS()
	if cfg.Direct {
		if res.Overhead, res.Direct, err = overhead(ctx, c, circ, overheadPairs(cfg.N), l.keyDir); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func measure(ctx context.Context, c *client.Client, circ *registry.Resolved, cfg Config, conc int) (Row, error) {
	before, err := busy(ctx, c)
	if err != nil {
		return Row{}, err
	}
	rep, err := client.RunLoad(ctx, c, client.Load{Circuit: circ, N: cfg.N, Concurrency: conc, Seed: int64(conc) << 20,
		Progress: cfg.Progress, Partitions: cfg.Partitions})
	if err != nil {
		return Row{}, err
	}
	after, err := busy(ctx, c)
	if err != nil {
		return Row{}, err
	}
	lat := rep.Latencies()
	row := Row{Concurrency: conc, Report: rep, P50: stats.Quantile(lat, .5), P90: stats.Quantile(lat, .9), P99: stats.Quantile(lat, .99)}
	row.Busy = (after.busy - before.busy) / rep.Wall.Seconds()
	row.BusyPer = busyBetween(before, after, rep.Wall)
	return row, nil
}

// busySample is the seconds spent proving: averaged over the devices, and
// per device.
type busySample struct {
	busy      float64
	perDevice map[string]float64
}

// busy reads the devices' busy seconds from GetStatus (ratio × uptime).
func busy(ctx context.Context, c *client.Client) (busySample, error) {
	st, err := c.GetStatus(ctx, &pb.GetStatusRequest{})
	if err != nil {
		return busySample{}, err
	}
	var s float64
	per := map[string]float64{}
	for _, d := range st.GetDevices() {
		b := d.GetBusyRatio() * time.Duration(st.GetUptimeNs()).Seconds()
		s += b
		per[d.GetName()] = b
	}
	return busySample{busy: s / float64(max(1, len(st.GetDevices()))), perDevice: per}, nil
}

// busyBetween is each device's busy ratio from a to b over wall.
func busyBetween(a, b busySample, wall time.Duration) map[string]float64 {
	out := map[string]float64{}
	for name, v := range b.perDevice {
		out[name] = (v - a.perDevice[name]) / wall.Seconds()
	}
	return out
}

// perDeviceString lists busy ratios by device name, sorted.
func perDeviceString(m map[string]float64) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %.0f %%", n, 100*m[n]))
	}
	return strings.Join(parts, ", ")
}

// critical queues n NORMAL jobs, then one CRITICAL job, and returns the
// CRITICAL job's latency.
func critical(ctx context.Context, c *client.Client, circ *registry.Resolved, n int) (time.Duration, error) {
	pbc := &pb.Circuit{Id: circ.Def.ID, Params: circ.Params}
	var ids []string
	for i := range n {
		in, err := circ.Example(int64(1<<30 + i))
		if err != nil {
			return 0, err
		}
		r, err := c.SubmitProof(ctx, &pb.ProofRequest{Circuit: pbc, Input: in})
		if err != nil {
			return 0, err
		}
		ids = append(ids, r.GetJobId())
	}
	in, err := circ.Example(1 << 31)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if _, err := c.Prove(ctx, &pb.ProofRequest{Circuit: pbc, Input: in, Priority: pb.Priority_PRIORITY_CRITICAL}); err != nil {
		return 0, err
	}
	took := time.Since(start)
	for _, id := range ids {
		if _, err := c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: id}); err != nil {
			return 0, err
		}
	}
	return took, nil
}

// overhead proves n inputs of circ alternately through the daemon (a
// Prove RPC, whose result the daemon verified) and directly (instance
// build, Solve, Prove on prover/cpu, Verify, with the daemon's own
// development key), and
// returns the median of the per-input differences and the median direct
// time. Pairing the two paths input by input keeps drift in the machine's
// load out of the difference.
func overhead(ctx context.Context, c *client.Client, circ *registry.Resolved, n int, keyDir string) (over, directMed time.Duration, err error) {
	be, err := cpu.New()
	if err != nil {
		return 0, 0, err
	}
	km, err := keysFor(keyDir)
	if err != nil {
		return 0, 0, err
	}
	h, err := km.Acquire(ctx, circ)
	if err != nil {
		return 0, 0, err
	}
	defer h.Release()
	pbc := &pb.Circuit{Id: circ.Def.ID, Params: circ.Params}
	var diffs, directs []time.Duration
	for i := range n {
		in, err := circ.Example(int64(1)<<36 + int64(i))
		if err != nil {
			return 0, 0, err
		}
		start := time.Now()
		if _, err := c.Prove(ctx, &pb.ProofRequest{Circuit: pbc, Input: in}); err != nil {
			return 0, 0, fmt.Errorf("daemon proof %d: %w", i, err)
		}
		viaDaemon := time.Since(start)
		start = time.Now() // the instance build counts on both paths, as the daemon does it too
		circuit, err := circ.Circuit(in)
		if err != nil {
			return 0, 0, err
		}
		asg, err := r1cs.Solve(circuit, r1cs.WithShape(h.Sys))
		if err != nil {
			return 0, 0, err
		}
		pub := append(asg.PublicInputs()[:0:0], asg.PublicInputs()...)
		proof, err := groth16.Prove(ctx, h.PK, asg, be, rand.Reader)
		if err != nil {
			return 0, 0, err
		}
		if err := groth16.Verify(h.VK, proof, pub); err != nil {
			return 0, 0, err
		}
		d := time.Since(start)
		directs = append(directs, d)
		diffs = append(diffs, viaDaemon-d)
	}
	return stats.Median(diffs), stats.Median(directs), nil
}

// overheadPairs is how many inputs the cross-check proves both ways: at
// least 16, since one CPU proof's time varies by about 1 % on a shared
// machine and the difference sought is a few milliseconds.
func overheadPairs(n int) int { return max(n, 16) }

// Write prints the result's tables and the targets' PASS/MISS.
func (r *Result) Write(w io.Writer, cfg Config) error {
	fmt.Fprintf(w, "daemon: backend %s, device %s, porep-synth %d constraints, %d proofs per row, %d partitions per proof, key preload %s, peak RSS %.2f GiB\n\n",
		r.Backend, r.Device, cfg.Constraints, cfg.N, max(1, cfg.Partitions), r.KeyLoad.Round(time.Millisecond), float64(r.PeakRSS)/(1<<30))
	t := report.NewTable("concurrency", "proofs/s", "p50", "p90", "p99", "device busy", "failed")
	for _, row := range r.Rows {
		t.Add(fmt.Sprint(row.Concurrency), fmt.Sprintf("%.2f", row.Report.Throughput()), stats.Ms(row.P50), stats.Ms(row.P90), stats.Ms(row.P99),
			fmt.Sprintf("%.0f %%", 100*row.Busy), fmt.Sprint(len(row.Report.Failures)))
	}
	if err := t.Write(w); err != nil {
		return err
	}
	for _, row := range r.Rows {
		if len(row.BusyPer) > 1 {
			fmt.Fprintf(w, "busy per device at concurrency %d: %s\n", row.Concurrency, perDeviceString(row.BusyPer))
		}
	}
	if len(r.Rows) > 0 {
		last := r.Rows[len(r.Rows)-1]
		fmt.Fprintf(w, "\nper-phase means per proof at concurrency %d (daemon-side; partitions summed):\n", last.Concurrency)
		pt := last.Report.PhaseTable("phase")
		if err := pt.Write(w); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	if r.DaemonMean > 0 && cfg.MaxOverhead > 0 {
		fmt.Fprintf(w, "daemon overhead per proof at concurrency 1: client latency − (synthesis + prove + verify) = %s (target ≤ %s)  %s\n",
			stats.Ms(r.Pipeline), stats.Ms(cfg.MaxOverhead), verdict(r.Pipeline <= cfg.MaxOverhead))
	} else if r.DaemonMean > 0 {
		fmt.Fprintf(w, "daemon overhead per proof at concurrency 1: client latency − (synthesis + prove + verify) = %s\n", stats.Ms(r.Pipeline))
	}
	if r.Direct > 0 {
		fmt.Fprintf(w, "cross-check, %d inputs each proved via the daemon and by direct calls: median difference %s on %s direct\n",
			overheadPairs(cfg.N), stats.Ms(r.Overhead), stats.Ms(r.Direct))
	}
	if cfg.MinThroughput > 0 && len(r.Rows) > 0 {
		best := 0.0
		for _, row := range r.Rows {
			best = max(best, row.Report.Throughput())
		}
		fmt.Fprintf(w, "throughput: %.2f proofs/s (target ≥ %.1f)  %s\n", best, cfg.MinThroughput, verdict(best >= cfg.MinThroughput))
	}
	if r.CriticalWait > 0 && r.SingleJob == 0 {
		fmt.Fprintf(w, "CRITICAL behind %d NORMAL: %s (no concurrency-1 row to compare with: add -c 1)\n", cfg.Critical, stats.Ms(r.CriticalWait))
	} else if r.CriticalWait > 0 {
		fmt.Fprintf(w, "CRITICAL behind %d NORMAL: %s = %.1f job times (one job alone, p50 %s; target ≤ 3)  %s\n", cfg.Critical,
			stats.Ms(r.CriticalWait), ratioOf(r.CriticalWait, r.SingleJob), stats.Ms(r.SingleJob), verdict(r.criticalOK()))
		fmt.Fprintf(w, "  = %.1f device-prove times (prove %s; the CRITICAL job's own synthesis comes first)\n",
			ratioOf(r.CriticalWait, r.GPUJob), stats.Ms(r.GPUJob))
	}
	fmt.Fprintf(w, "every proof verified by the client: %s\n", verdict(r.Failures == 0))
	return nil
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

// OK reports whether every proof verified and every target set in cfg
// was met.
func (r *Result) OK(cfg Config) bool {
	if r.Failures > 0 {
		return false
	}
	if r.DaemonMean > 0 && cfg.MaxOverhead > 0 && r.Pipeline > cfg.MaxOverhead {
		return false
	}
	if cfg.MinThroughput > 0 {
		best := 0.0
		for _, row := range r.Rows {
			best = max(best, row.Report.Throughput())
		}
		if best < cfg.MinThroughput {
			return false
		}
	}
	return r.criticalOK()
}

// criticalOK: the CRITICAL job finished within 3 times one job's own
// latency (measured alone), or was not measured.
func (r *Result) criticalOK() bool {
	return r.CriticalWait == 0 || r.SingleJob == 0 || r.CriticalWait <= 3*r.SingleJob
}

func ratioOf(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}
