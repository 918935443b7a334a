package loadbench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/cuzk-dev/cuzk/daemon/assembly"
	"io"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/client"
	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/internal/report"
	"github.com/cuzk-dev/cuzk/internal/stats"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// C2Config is a C2-shaped run: Proofs proofs of Partitions partitions of
// Circuit each, through a daemon started here, with the development key
// generated at start (on the GPU when there is one) and kept in memory.
type C2Config struct {
	// Circuit is the partition's circuit id: porep-c2 (the default, PoRep
	// C2's column densities) or porep-synth (the shape of earlier figures).
	Circuit     string
	Constraints uint64 // per partition
	Partitions  int
	Proofs      int
	// InFlight is how many proofs are submitted at once (0: 2, so that the
	// next proof's synthesis overlaps this one's GPU work).
	InFlight int
	// Slots is how many partitions' vectors the host holds at once: the
	// daemon's host job budget (0: 2, one synthesizing while one proves).
	Slots int
	// Synthesizers is how many partitions are solved at once (0: 1).
	Synthesizers int
	// SynthesisWorkers is the goroutines of one synthesis, the daemon's
	// synthesis_workers (0: the daemon's default, decided per solve: the
	// cores shared among the solves running, halved while the GPU streams
	// the key's bases).
	SynthesisWorkers int
	Backend          string // daemon backend: auto, gpu or cpu
	GPUs             []int  // GPU ordinals the daemon uses (nil: all)
	// KeyDir, when set, is the daemon's key directory, and keys are
	// written there as usual; "" keeps the development key in memory only.
	KeyDir string
	// GPUMemory is the daemon's gpu_memory_limit (0: none): the device
	// memory the prover may hold on each GPU; the run checks it two ways.
	GPUMemory int64
	// GPUBatch is the daemon's gpu_batch (0: its default): the most
	// partitions of the key a GPU proves together where it streams bases.
	GPUBatch int
	Log      *slog.Logger // the daemon's log (nil: none)
	// Targets (0: none): the steady-state wall per proof, the wall per
	// proof over every proof (pipeline fill included), one proof's latency
	// alone, the peak host RSS, and the device busy ratio by CUDA events
	// in steady state.
	MaxProofWall time.Duration
	MaxFillWall  time.Duration
	MaxSingle    time.Duration
	MaxRSS       int64
	// MaxKeyReady is the target for the key's preload when it comes from a
	// raw key file in KeyDir (compile, map, verify, upload); a development
	// setup is not held to it.
	MaxKeyReady time.Duration
	MinBusy     float64
	Progress    func(done, total int)
}

// C2Result is what RunC2 measured.
type C2Result struct {
	Backend, Device string
	Counts          *r1cs.System // one partition's shape
	PartitionBytes  int64        // one partition's solved vectors
	JobBudget       int64        // the daemon's host job budget
	KeyEstimate     int64        // the key's host bytes, estimated before loading
	Key             *pb.KeyInfo
	KeyLoad         time.Duration // preload: compile, setup, upload to the device
	// KeyFile is the raw key file the preload mapped (in KeyDir before
	// the run); "": the key came from a development setup.
	KeyFile string
	Warmup  time.Duration // one partition alone, before the proofs
	Single  time.Duration // one proof of every partition alone, after the warm-up
	Start   time.Time     // the proofs' submission
	Report  *client.Report
	// Steady is the wall time per proof between the first and the last
	// completion (SteadyIntervals = proofs − 1 intervals: the pipeline's
	// fill is before the first completion), and SteadyBusy the worker busy
	// ratio over the same span.
	Steady          time.Duration
	SteadyIntervals int
	SteadyBusy      float64
	// EventBusy is the devices' time by CUDA events (every MSM's device
	// stages and every quotient's device span, summed over the partitions)
	// over the wall of all the proofs; SteadyEventBusy the same for the
	// proofs after the first over the steady span.
	EventBusy       float64
	SteadyEventBusy float64
	Busy            float64            // worker busy ratio (wall inside the device's Prove) over all the proofs, averaged over the devices
	BusyPer         map[string]float64 // each device's over all the proofs
	PeakRSS         int64              // this process's peak resident set, key setup included
	// LoadRSS and WarmRSS are the peak resident set (VmHWM) once the key
	// was ready and once the warm-up and the single proof were done: they
	// say in which part of the run PeakRSS was reached.
	LoadRSS, WarmRSS int64
	ProvingRSS       int64 // the largest resident set sampled while proving
	// provingMem is where the resident set lay near its largest sample
	// while proving (read again each time the set grew by a sixteenth, at
	// most every 5 s); memErr why it could not be read.
	provingMem hostMemory
	memErr     error
	GPUPeak    int64 // the most device memory the prover held at once (its own account)
	GPUTotal   int64
	// GPUDriverPeak is the most device memory in use by the run by the
	// driver's free-memory query (sampled every 200 ms from before the
	// daemon starts to its end): the prover's allocations with the
	// driver's own (modules, local memory); 0 where not measured.
	GPUDriverPeak int64
	gpuProbeErr   error
	// Placement is how the key used the first GPU: resident and streamed
	// bases (the latter sent for every partition), the peak the plan
	// allows and the plan in words (nil on the CPU).
	Placement *pb.DeviceKey
}

// RunC2 starts a daemon, loads the key, proves one partition as a warm-up,
// then cfg.Proofs multi-partition proofs, every partition verified by the
// client, and stops the daemon.
func RunC2(ctx context.Context, cfg C2Config) (*C2Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	circ, err := registry.Default().Resolve(cfg.Circuit, map[string]uint64{"constraints": cfg.Constraints})
	if err != nil {
		return nil, err
	}
	counts, _, err := circ.Counts()
	if err != nil {
		return nil, err
	}
	res := &C2Result{Counts: counts, PartitionBytes: counts.AssignmentBytes(),
		KeyEstimate: keys.EstimateBytes(counts)}
	res.JobBudget = int64(cfg.Slots) * res.PartitionBytes
	probe := startGPUProbe(cfg)
	defer func() { res.GPUDriverPeak, res.gpuProbeErr = probe.stop() }()
	l, err := startLocal(c2Daemon(cfg, counts, res), cfg.Log)
	if err != nil {
		return nil, err
	}
	defer l.stop()
	c := l.c
	res.Backend = l.d.Backend()
	if cfg.KeyDir != "" {
		res.KeyFile = keys.RawKeyFile(cfg.KeyDir, circ.Key)
	}
	if res.Key, res.KeyLoad, err = l.preload(ctx, circ); err != nil {
		return nil, err
	}
	res.LoadRSS = peakRSS()
	if err := warmAndSingle(ctx, c, circ, cfg.Partitions, res); err != nil {
		return nil, err
	}
	res.WarmRSS = peakRSS()

	mon := startMonitor(ctx, c)
	var mu sync.Mutex
	var marks []busyMark // at each proof's completion
	first, err := busy(ctx, c)
	if err != nil {
		return nil, err
	}
	res.Start = time.Now()
	rep, err := client.RunLoad(ctx, c, client.Load{Circuit: circ, N: cfg.Proofs, Concurrency: cfg.InFlight, Partitions: cfg.Partitions,
		Seed: 1 << 20, Progress: func(done, total int) {
			if s, err := busy(ctx, c); err == nil {
				mu.Lock()
				marks = append(marks, busyMark{at: time.Now(), busy: s.busy})
				mu.Unlock()
			}
			if cfg.Progress != nil {
				cfg.Progress(done, total)
			}
		}})
	mon.stop()
	if err != nil {
		return nil, err
	}
	res.Report = rep
	last, err := busy(ctx, c)
	if err != nil {
		return nil, err
	}
	res.Busy = (last.busy - first.busy) / rep.Wall.Seconds()
	res.BusyPer = busyBetween(first, last, rep.Wall)
	res.Steady, res.SteadyIntervals = steadyOf(rep, res.Start)
	if n := len(marks); n >= 2 {
		res.SteadyBusy = (marks[n-1].busy - marks[0].busy) / marks[n-1].at.Sub(marks[0].at).Seconds()
	}
	res.EventBusy, res.SteadyEventBusy = eventBusy(rep, len(res.BusyPer))
	res.PeakRSS = peakRSS()
	res.ProvingRSS, res.GPUPeak, res.GPUTotal = mon.rss, mon.gpuPeak, mon.gpuTotal
	res.provingMem, res.memErr = mon.mem, mon.memErr
	res.Placement = mon.placement
	return res, nil
}

// c2Daemon is the configuration of the daemon a C2 run starts: cfg's
// devices and key directory, one partition's vectors per slot, and a Go
// memory limit sized for the key and its development setup.
func c2Daemon(cfg C2Config, counts *r1cs.System, res *C2Result) assembly.Config {
	opts := assembly.DefaultConfig()
	opts.Backend, opts.GPUs, opts.KeyDir, opts.DevKeysInMemory = cfg.Backend, cfg.GPUs, cfg.KeyDir, cfg.KeyDir == ""
	opts.GPUMemoryLimit, opts.GPUBatch = stats.Bytes(cfg.GPUMemory), cfg.GPUBatch
	// By default one synthesis at a time, on every core (half of them
	// while the GPU streams the key): a partition is solved while the one
	// before it proves. The
	// key's host copy goes once the GPU holds it (one GPU).
	opts.Synthesizers, opts.HostJobBudget, opts.ReleaseHostKeys = cfg.Synthesizers, stats.Bytes(res.JobBudget), true
	opts.SynthesisWorkers = cfg.SynthesisWorkers
	// The Go heap holds the key and the development setup's scalar vectors
	// (the key is made at start); on a GPU the partitions' vectors are
	// outside it (pinned), so the limit leaves them out there.
	opts.MemoryLimit = stats.Bytes(res.KeyEstimate + keys.EstimateSize(counts).SetupScratchBytes() + 8<<30)
	if cfg.Backend == "cpu" {
		opts.MemoryLimit += stats.Bytes(res.JobBudget)
	}
	return opts
}

// warmAndSingle proves one partition (the warm-up: the device's first
// proof, kernels and tables loaded) and then one proof of partitions
// partitions alone, whose latency is the single-proof figure.
func warmAndSingle(ctx context.Context, c *client.Client, circ *registry.Resolved, partitions int, res *C2Result) error {
	start := time.Now()
	warm, err := client.RunLoad(ctx, c, client.Load{Circuit: circ, N: 1, Seed: 1 << 40})
	if err != nil {
		return err
	}
	if len(warm.Failures) > 0 {
		return fmt.Errorf("warm-up: %w", warm.Failures[0])
	}
	res.Warmup = time.Since(start)
	if len(warm.Proofs) > 0 {
		res.Device = warm.Proofs[0].Result.GetDevice()
	}
	single, err := client.RunLoad(ctx, c, client.Load{Circuit: circ, N: 1, Partitions: partitions, Seed: 1 << 41})
	if err != nil {
		return err
	}
	if len(single.Failures) > 0 || len(single.Proofs) != 1 {
		return fmt.Errorf("single proof: %w", errors.Join(single.Failures...))
	}
	res.Single = single.Proofs[0].Latency
	return nil
}

// steadyOf is the wall per proof between the first and the last
// completion, over the intervals between them (with one proof: from start).
func steadyOf(rep *client.Report, start time.Time) (time.Duration, int) {
	ends := make([]time.Time, 0, len(rep.Proofs))
	for _, p := range rep.Proofs {
		ends = append(ends, p.End)
	}
	sort.Slice(ends, func(a, b int) bool { return ends[a].Before(ends[b]) })
	switch n := len(ends); {
	case n >= 2:
		return ends[n-1].Sub(ends[0]) / time.Duration(n-1), n - 1
	case n == 1:
		return ends[0].Sub(start), 0
	}
	return 0, 0
}

// withDefaults checks cfg and fills in the defaults of its zero fields.
func (cfg C2Config) withDefaults() (C2Config, error) {
	if cfg.Partitions < 1 || cfg.Proofs < 1 {
		return cfg, errors.New("c2: partitions and proofs must be positive")
	}
	if cfg.InFlight < 0 || cfg.Slots < 0 || cfg.Synthesizers < 0 || cfg.SynthesisWorkers < 0 {
		return cfg, errors.New("c2: in-flight proofs, slots, synthesizers and synthesis workers cannot be negative")
	}
	cfg.InFlight, cfg.Slots, cfg.Synthesizers = cmp.Or(cfg.InFlight, 2), cmp.Or(cfg.Slots, 2), cmp.Or(cfg.Synthesizers, 1)
	cfg.Circuit = cmp.Or(cfg.Circuit, "porep-c2")
	return cfg, nil
}

// eventPhases are the device stages timed by CUDA events, as the daemon
// names them in a partition's phases ("<call>: <stage>"): they follow one
// another on a device (its calls are serialized and each call's stages
// are sequential), so their sum is device time without double counting.
var eventPhases = []string{"quotient device", "msm sort", "msm accumulate", "msm reduce", "msm window"}

// eventTime sums the CUDA-event phases of one partition's timings.
func eventTime(phases map[string]int64) time.Duration {
	var d time.Duration
	for k, v := range phases {
		_, stage, ok := strings.Cut(k, ": ")
		if !ok {
			continue
		}
		for _, e := range eventPhases {
			if stage == e {
				d += time.Duration(v)
			}
		}
	}
	return d
}

// eventBusy is the device time by CUDA events over the wall of all the
// proofs, and that of the proofs after the first to complete over the span
// between the first and the last completion, each divided by the number of
// devices (at least 1).
func eventBusy(rep *client.Report, devices int) (all, steady float64) {
	devices = max(devices, 1)
	proofs := slices.Clone(rep.Proofs)
	sort.Slice(proofs, func(a, b int) bool { return proofs[a].End.Before(proofs[b].End) })
	var sum, after time.Duration
	for i, p := range proofs {
		for _, part := range p.Result.GetPartitions() {
			d := eventTime(part.GetTimings().GetPhasesNs())
			sum += d
			if i > 0 {
				after += d
			}
		}
	}
	if rep.Wall > 0 {
		all = sum.Seconds() / rep.Wall.Seconds() / float64(devices)
	}
	if n := len(proofs); n >= 2 {
		if span := proofs[n-1].End.Sub(proofs[0].End); span > 0 {
			steady = after.Seconds() / span.Seconds() / float64(devices)
		}
	}
	return all, steady
}

type busyMark struct {
	at   time.Time
	busy float64
}

// monitor samples the process's resident set and the devices' peak memory
// every 200 ms while the proofs run.
type monitor struct {
	c                 *client.Client
	cancel            context.CancelFunc
	done              chan struct{}
	rss               int64
	gpuPeak, gpuTotal int64
	placement         *pb.DeviceKey // the first device's first key
	mem               hostMemory    // read at memAt
	memAt             time.Time
	memErr            error
}

func startMonitor(ctx context.Context, c *client.Client) *monitor {
	ctx, cancel := context.WithCancel(ctx)
	m := &monitor{c: c, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			m.sample(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return m
}

func (m *monitor) sample(ctx context.Context) {
	rss := currentRSS()
	m.rss = max(m.rss, rss)
	if m.memErr == nil && (m.memAt.IsZero() || rss > m.mem.RSS+max(1<<30, m.mem.RSS/16) && time.Since(m.memAt) >= 5*time.Second) {
		m.mem, m.memErr = readHostMemory() // smaps walks the page tables: not at every sample
		m.memAt = time.Now()
	}
	st, err := m.c.GetStatus(ctx, &pb.GetStatusRequest{})
	if err != nil {
		return
	}
	for _, d := range st.GetDevices() {
		m.gpuPeak = max(m.gpuPeak, d.GetMemoryPeakBytes())
		m.gpuTotal = max(m.gpuTotal, d.GetMemoryBytes())
		if m.placement == nil && len(d.GetKeys()) > 0 {
			m.placement = d.GetKeys()[0]
		}
	}
}

// stop ends the sampling after one last sample.
func (m *monitor) stop() {
	m.cancel()
	<-m.done
	m.sample(context.Background())
}

// currentRSS reads VmRSS from /proc/self/status (0 where there is none).
func currentRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// Write prints the run: the setup, one row per proof, the per-partition
// phases, and the targets' PASS/MISS.
func (r *C2Result) Write(w io.Writer, cfg C2Config) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return err
	}
	s := func(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
	workers := "the daemon's default (cores / solves running, halved while a device streams the key)"
	if cfg.SynthesisWorkers > 0 {
		workers = strconv.Itoa(cfg.SynthesisWorkers)
	}
	fmt.Fprintf(w, "c2: backend %s, device %s; %d proofs of %d partitions, %d in flight, %d synthesizer(s) of %s goroutines\n", r.Backend, r.Device,
		cfg.Proofs, cfg.Partitions, cfg.InFlight, cfg.Synthesizers, workers)
	fmt.Fprintf(w, "partition: %s %d: %d constraints, %d wires, domain 2^%d; vectors %s each, host job budget %s (%d partitions)\n",
		cfg.Circuit, cfg.Constraints, r.Counts.NbConstraints, r.Counts.NbVariables(), stats.Log2(r.Counts.DomainSize()), stats.FormatGiB(r.PartitionBytes),
		stats.FormatGiB(r.JobBudget), cfg.Slots)
	how := "compile, development setup, upload"
	if r.KeyFile != "" {
		how = "compile, map and verify " + r.KeyFile + ", upload"
	}
	fmt.Fprintf(w, "key: preload %s (%s), host %s after the upload, device %s (estimated %s)",
		s(r.KeyLoad), how, stats.FormatGiB(r.Key.GetHostBytes()), stats.FormatGiB(r.Key.GetGpuBytes()), stats.FormatGiB(r.KeyEstimate))
	if r.KeyFile != "" && cfg.MaxKeyReady > 0 {
		fmt.Fprintf(w, " (target ≤ %s from a raw key file)  %s", s(cfg.MaxKeyReady), verdict(r.KeyLoad <= cfg.MaxKeyReady))
	}
	fmt.Fprintln(w)
	if load := time.Duration(r.Key.GetLoadNs()); load > 0 && load <= r.KeyLoad {
		fmt.Fprintf(w, "  of which the key's load %s (the key manager's: compile and setup, or map and verify), then %s for the upload and the vector sets made ahead\n",
			s(load), s(r.KeyLoad-load))
	}
	fmt.Fprintf(w, "warm-up: one partition alone in %s\n", s(r.Warmup))
	fmt.Fprintf(w, "single proof: %d partitions alone in %s", cfg.Partitions, s(r.Single))
	if cfg.MaxSingle > 0 {
		fmt.Fprintf(w, " (target ≤ %s)  %s", s(cfg.MaxSingle), verdict(r.Single > 0 && r.Single <= cfg.MaxSingle))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	t := report.NewTable("proof", "latency", "completed at", "partitions verified")
	for _, p := range r.Report.Proofs {
		t.Add(fmt.Sprint(p.Index), s(p.Latency), s(p.End.Sub(r.Start)), fmt.Sprint(len(p.Result.GetPartitions())))
	}
	if err := t.Write(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := r.partitionTable().Write(w); err != nil {
		return err
	}
	if lo, hi := r.SynthesisWorkers(); hi > 0 {
		fmt.Fprintf(w, "synthesis goroutines a partition's solve ran on: %d to %d\n", lo, hi)
	}
	if sent, parts, bytes := r.SentAhead(); parts > 0 {
		fmt.Fprintf(w, "partitions whose quotient found its A evaluations sent ahead: %d of %d (%.2f GiB a partition sent ahead on average)\n",
			sent, parts, float64(bytes)/float64(parts)/(1<<30))
	}
	if between, lead, elsewhere := r.DeviceIdle(); between > 0 || lead > 0 || elsewhere > 0 {
		ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
		fmt.Fprintf(w, "device idle a partition (means, by CUDA events): %.1f ms between its MSMs' chunks, %.1f ms before their first chunks, %.1f ms elsewhere in its turn\n",
			ms(between), ms(lead), ms(elsewhere))
	}
	fmt.Fprintln(w)
	n := max(1, len(r.Report.Proofs))
	fill := r.Report.Wall / time.Duration(n)
	fmt.Fprintf(w, "all %d proofs, pipeline fill included: %s wall, %s per proof", len(r.Report.Proofs), s(r.Report.Wall), s(fill))
	if cfg.MaxFillWall > 0 {
		fmt.Fprintf(w, " (target ≤ %s)  %s", s(cfg.MaxFillWall), verdict(fill <= cfg.MaxFillWall))
	}
	fmt.Fprintf(w, "\ndevice busy over all proofs: %.1f %% by CUDA events (MSM stages and quotient spans), %.1f %% worker wall inside Prove\n",
		100*r.EventBusy, 100*r.Busy)
	if len(r.BusyPer) > 1 {
		fmt.Fprintf(w, "worker busy per device: %s\n", perDeviceString(r.BusyPer))
	}
	fmt.Fprintf(w, "steady state (%d intervals between the first and the last completion): %s per proof", r.SteadyIntervals, s(r.Steady))
	if cfg.MaxProofWall > 0 {
		fmt.Fprintf(w, " (target ≤ %s)  %s", s(cfg.MaxProofWall), verdict(r.Steady > 0 && r.Steady <= cfg.MaxProofWall && r.SteadyIntervals >= 4))
	}
	fmt.Fprintf(w, "\nsteady-state device busy: %.1f %% by CUDA events", 100*r.SteadyEventBusy)
	if cfg.MinBusy > 0 {
		fmt.Fprintf(w, " (target ≥ %.0f %%)  %s", 100*cfg.MinBusy, verdict(r.SteadyEventBusy >= cfg.MinBusy))
	}
	fmt.Fprintf(w, "; %.1f %% worker wall", 100*r.SteadyBusy)
	fmt.Fprintf(w, "\npeak host RSS: %s (by the key's load %s, by the warm-up and the single proof %s; largest sampled while proving %s)",
		stats.FormatGiB(r.PeakRSS), stats.FormatGiB(r.LoadRSS), stats.FormatGiB(r.WarmRSS), stats.FormatGiB(r.ProvingRSS))
	if cfg.MaxRSS > 0 {
		fmt.Fprintf(w, " (target ≤ %s)  %s", stats.FormatGiB(cfg.MaxRSS), verdict(r.PeakRSS <= cfg.MaxRSS))
	}
	fmt.Fprintln(w)
	if r.memErr != nil {
		fmt.Fprintf(w, "  where it lay: not read (%v)\n", r.memErr)
	} else if r.provingMem.Mappings != nil {
		r.provingMem.write(w, "  ")
	}
	fmt.Fprintf(w, "peak device memory held by the prover: %s of %s (its account)", stats.FormatGiB(r.GPUPeak), stats.FormatGiB(r.GPUTotal))
	switch {
	case r.gpuProbeErr != nil:
		fmt.Fprintf(w, "; by the driver's free memory: not measured (%v)", r.gpuProbeErr)
	case r.GPUDriverPeak > 0:
		fmt.Fprintf(w, ", %s by the driver's free memory around the run", stats.FormatGiB(r.GPUDriverPeak))
	}
	if cfg.GPUMemory > 0 {
		fmt.Fprintf(w, " (limit %s; the driver's figure may pass it by %s of its own)  %s", stats.FormatGiB(cfg.GPUMemory),
			stats.FormatMiB(driverSlack), verdict(r.deviceMemoryOK(cfg)))
	}
	fmt.Fprintln(w)
	if p := r.Placement; p != nil {
		fmt.Fprintf(w, "key on the device: %s resident, %s of bases streamed for each partition; %s\n",
			stats.FormatGiB(p.GetResidentBytes()), stats.FormatGiB(p.GetStreamedBytes()), p.GetPlan())
	}
	fmt.Fprintf(w, "every partition proof verified by the client: %s\n", verdict(len(r.Report.Failures) == 0 && len(r.Report.Proofs) == cfg.Proofs))
	for _, f := range r.Report.Failures {
		fmt.Fprintf(w, "  %v\n", f)
	}
	return nil
}

// OK reports whether every proof verified and every target set was met.
func (r *C2Result) OK(cfg C2Config) bool {
	fill := r.Report.Wall / time.Duration(max(1, len(r.Report.Proofs)))
	return len(r.Report.Failures) == 0 && len(r.Report.Proofs) == cfg.Proofs &&
		(cfg.MaxProofWall == 0 || (r.Steady > 0 && r.Steady <= cfg.MaxProofWall && r.SteadyIntervals >= 4)) &&
		(cfg.MaxFillWall == 0 || fill <= cfg.MaxFillWall) &&
		(cfg.MaxSingle == 0 || (r.Single > 0 && r.Single <= cfg.MaxSingle)) &&
		(cfg.MinBusy == 0 || r.SteadyEventBusy >= cfg.MinBusy) && (cfg.MaxRSS == 0 || r.PeakRSS <= cfg.MaxRSS) &&
		(cfg.MaxKeyReady == 0 || r.KeyFile == "" || r.KeyLoad <= cfg.MaxKeyReady) && r.deviceMemoryOK(cfg)
}

// driverSlack is what the driver may hold beside the prover's allocations
// (its modules' code, events, local memory for the kernels) when the
// driver's free memory is checked against gpu_memory_limit.
const driverSlack = 256 << 20

// deviceMemoryOK reports whether the device memory stayed within
// cfg.GPUMemory (when set) by the prover's account and by the driver's.
func (r *C2Result) deviceMemoryOK(cfg C2Config) bool {
	return cfg.GPUMemory == 0 || (r.GPUPeak <= cfg.GPUMemory && r.gpuProbeErr == nil && r.GPUDriverPeak <= cfg.GPUMemory+driverSlack)
}

// SynthesisWorkers returns the fewest and the most goroutines a
// partition's solve ran on over every proof, as the daemon reported them
// (0, 0: none reported).
func (r *C2Result) SynthesisWorkers() (lo, hi int) {
	for _, p := range r.Report.Proofs {
		for _, part := range p.Result.GetPartitions() {
			n := int(part.GetTimings().GetSynthesisWorkers())
			if n <= 0 {
				continue
			}
			if lo == 0 || n < lo {
				lo = n
			}
			hi = max(hi, n)
		}
	}
	return lo, hi
}

// SentAhead returns how many partitions, over every proof, found part of
// their input sent to the device ahead (Timings.sent_ahead_bytes: the
// quotient's A evaluations, sent beside the proof before), of how many,
// and the bytes so sent in all.
func (r *C2Result) SentAhead() (sent, parts int, bytes int64) {
	for _, p := range r.Report.Proofs {
		for _, part := range p.Result.GetPartitions() {
			parts++
			if b := part.GetTimings().GetSentAheadBytes(); b > 0 {
				sent++
				bytes += b
			}
		}
	}
	return sent, parts, bytes
}

// DeviceIdle returns, as means over every partition of every proof that
// the device timed by CUDA events, the device's idle time inside its
// chunked MSMs (the "msm idle" sub-phases: between one chunk's stages and
// the next's), before them (the "msm lead" sub-phases: from the device's
// work before each to its first stage), and the rest of its turn that no
// event-timed stage covers (before the quotient, Prove's host work, after
// the last MSM): the device turn less the event-timed stages, less the
// other two. All are 0 where no partition has event-timed work (the CPU
// backend).
func (r *C2Result) DeviceIdle() (between, lead, elsewhere time.Duration) {
	var idle, leads, turn, events time.Duration
	parts := 0
	for _, p := range r.Report.Proofs {
		for _, part := range p.Result.GetPartitions() {
			ph := part.GetTimings().GetPhasesNs()
			ev := eventTime(ph)
			if ev == 0 {
				continue
			}
			parts++
			events += ev
			turn += time.Duration(part.GetTimings().GetProveNs())
			for k, v := range ph {
				_, stage, _ := strings.Cut(k, ": ")
				switch stage {
				case string(groth16.PhaseMSMIdle):
					idle += time.Duration(v)
				case string(groth16.PhaseMSMLead):
					leads += time.Duration(v)
				}
			}
		}
	}
	if parts == 0 {
		return 0, 0, 0
	}
	n := time.Duration(parts)
	return idle / n, leads / n, (turn - events - idle - leads) / n
}

// partitionTable is the daemon's timings per partition over every proof:
// mean and largest of each phase.
func (r *C2Result) partitionTable() *report.Table {
	sums, maxs, n := map[string]time.Duration{}, map[string]time.Duration{}, 0
	add := func(k string, v int64) {
		d := time.Duration(v)
		sums[k] += d
		maxs[k] = max(maxs[k], d)
	}
	for _, p := range r.Report.Proofs {
		for _, part := range p.Result.GetPartitions() {
			n++
			t := part.GetTimings()
			add("queue (waiting for host memory and the synthesizer)", t.GetQueueNs())
			add("synthesis", t.GetSynthesisNs())
			add("handoff (waiting for the device)", t.GetHandoffNs())
			add("prove (device)", t.GetProveNs())
			add("verify (daemon, beside the next)", t.GetVerifyNs())
			for k, v := range t.GetPhasesNs() {
				add("prove/"+k, v)
			}
		}
	}
	names := make([]string, 0, len(sums))
	for k := range sums {
		names = append(names, k)
	}
	sort.Strings(names)
	t := report.NewTable(fmt.Sprintf("per partition (%d)", n), "mean", "max")
	for _, k := range names {
		t.Add(k, stats.Ms(sums[k]/time.Duration(max(1, n))), stats.Ms(maxs[k]))
	}
	return t
}
