package loadbench

import (
	"context"
	"errors"
	"fmt"
	"github.com/cuzk-dev/cuzk/daemon/assembly"
	"io"
	"log/slog"
	"math/rand"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/client"
)

// SoakConfig is a soak: many small jobs against one daemon on the CPU
// backend, with random cancels, client deadlines, key requests with short
// deadlines, and preloads and evictions, to see that memory and
// goroutines come back to their level.
type SoakConfig struct {
	Jobs        int   // operations in all (default 10000)
	Concurrency int   // clients at once (default 8)
	Seed        int64 // the operations' random source; logged with the result
	Samples     int   // rows of the RSS table (default 10)
	// Shapes are the porep-synth sizes the operations pick from (default
	// 1024 and 2048: small keys, proofs of tens of milliseconds).
	Shapes []uint64
}

// SoakSample is the daemon process's state after Done operations.
type SoakSample struct {
	Done       int
	Elapsed    time.Duration
	RSS        int64 // resident now (not the peak)
	HeapInuse  int64
	Goroutines int
}

// SoakResult is what a soak saw.
type SoakResult struct {
	Seed     int64
	Samples  []SoakSample // the first after the warm-up, the last once idle
	Outcomes map[string]int
	Failures []string // outcomes no operation should have (a proof that did not verify, an Internal error)
}

// Soak runs cfg against a daemon started in this process.
func Soak(ctx context.Context, cfg SoakConfig, log *slog.Logger) (*SoakResult, error) {
	if cfg.Jobs == 0 {
		cfg.Jobs = 10000
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 8
	}
	if cfg.Samples == 0 {
		cfg.Samples = 10
	}
	if len(cfg.Shapes) == 0 {
		cfg.Shapes = []uint64{1024, 2048}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts := assembly.DefaultConfig()
	opts.Backend = "cpu"
	l, err := startLocal(opts, log)
	if err != nil {
		return nil, err
	}
	defer l.stop()
	for _, s := range cfg.Shapes { // warm-up: every key generated once
		if _, err := l.c.PreloadKey(ctx, &pb.KeyRequest{Circuit: porepCircuit(s)}); err != nil {
			return nil, fmt.Errorf("soak: preload %d: %w", s, err)
		}
	}
	res := &SoakResult{Seed: cfg.Seed, Outcomes: map[string]int{}}
	var mu sync.Mutex
	record := func(outcome, failure string) {
		mu.Lock()
		defer mu.Unlock()
		res.Outcomes[outcome]++
		if failure != "" && len(res.Failures) < 20 {
			res.Failures = append(res.Failures, failure)
		}
	}
	start := time.Now()
	res.Samples = append(res.Samples, sample(0, 0))
	every := max(1, cfg.Jobs/cfg.Samples)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(cfg.Seed + int64(w)))
			for {
				i := int(next.Add(1))
				if i > cfg.Jobs || ctx.Err() != nil {
					return
				}
				soakOp(ctx, l.c, rng, cfg.Shapes, i, record)
				if i%every == 0 {
					s := sample(i, time.Since(start))
					mu.Lock()
					res.Samples = append(res.Samples, s)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if err := waitIdle(ctx, l.c); err != nil {
		return res, err
	}
	runtime.GC()
	res.Samples = append(res.Samples, sample(cfg.Jobs, time.Since(start)))
	sort.SliceStable(res.Samples, func(i, j int) bool { return res.Samples[i].Done < res.Samples[j].Done })
	return res, ctx.Err()
}

func porepCircuit(s uint64) *pb.Circuit {
	return &pb.Circuit{Id: "porep-synth", Params: map[string]uint64{"constraints": s}}
}

// soakOp is operation i: mostly proofs, some cancelled, some with a
// client deadline, some key requests with a short deadline, some preloads
// and evictions.
func soakOp(ctx context.Context, c *client.Client, rng *rand.Rand, shapes []uint64, i int, record func(outcome, failure string)) {
	circ := porepCircuit(shapes[rng.Intn(len(shapes))])
	req := &pb.ProofRequest{Circuit: circ, Input: seedBytes(uint64(i)), SkipVerify: rng.Intn(4) == 0}
	if rng.Intn(5) == 0 {
		req.RequestId = "soak-" + strconv.Itoa(rng.Intn(cfgIDs)) // repeats: the same request, or AlreadyExists
	}
	switch p := rng.Intn(100); {
	case p < 65: // a proof
		r, err := c.Prove(ctx, req)
		classify(record, "prove", r, err, req.GetSkipVerify())
	case p < 80: // submitted, then cancelled after 0-5 ms
		sub, err := c.SubmitProof(ctx, req)
		if err != nil {
			classify(record, "cancel", nil, err, false)
			return
		}
		time.Sleep(time.Duration(rng.Intn(5000)) * time.Microsecond) // load shaping, not synchronization
		_, _ = c.CancelProof(ctx, &pb.CancelProofRequest{JobId: sub.GetJobId()})
		r, err := c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: sub.GetJobId()})
		classify(record, "cancel", r, err, req.GetSkipVerify())
	case p < 90: // a proof with a 1-30 ms deadline
		dctx, cancel := context.WithTimeout(ctx, time.Duration(1+rng.Intn(30))*time.Millisecond)
		r, err := c.Prove(dctx, req)
		cancel()
		classify(record, "deadline", r, err, req.GetSkipVerify())
	case p < 95: // a verifying key with a 1-10 ms deadline
		dctx, cancel := context.WithTimeout(ctx, time.Duration(1+rng.Intn(10))*time.Millisecond)
		_, err := c.GetVerifyingKey(dctx, &pb.KeyRequest{Circuit: circ})
		cancel()
		classify(record, "vk", nil, err, true)
	default: // a preload or an eviction
		var err error
		if rng.Intn(2) == 0 {
			_, err = c.PreloadKey(ctx, &pb.KeyRequest{Circuit: circ})
		} else {
			_, err = c.EvictKey(ctx, &pb.EvictKeyRequest{Circuit: circ})
		}
		classify(record, "key", nil, err, true)
	}
}

// cfgIDs is how many request_ids the soak reuses.
const cfgIDs = 50

// classify records an operation's outcome; an unexpected one is a failure.
func classify(record func(string, string), op string, r *pb.ProofResult, err error, skipVerify bool) {
	code := status.Code(err)
	switch {
	case err == nil && r != nil && !skipVerify && !r.GetVerified() && len(r.GetPartitions()) == 0:
		record(op+" unverified", fmt.Sprintf("%s: job %s done but not verified", op, r.GetJobId()))
	case err == nil:
		record(op+" ok", "")
	case code == codes.Canceled, code == codes.DeadlineExceeded, code == codes.AlreadyExists, code == codes.ResourceExhausted:
		record(op+" "+strings.ToLower(code.String()), "")
	default:
		record(op+" "+code.String(), fmt.Sprintf("%s: %v", op, err))
	}
}

func seedBytes(s uint64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(s >> (8 * i))
	}
	return b
}

// waitIdle waits until the daemon has no job queued, synthesizing, ready
// or proving (jobs whose clients left go on to their end).
func waitIdle(ctx context.Context, c *client.Client) error {
	for {
		st, err := c.GetStatus(ctx, &pb.GetStatusRequest{})
		if err != nil {
			return fmt.Errorf("soak: status: %w", err)
		}
		q := st.GetQueue()
		if q.GetCritical()+q.GetHigh()+q.GetNormal()+q.GetLow()+q.GetSynthesizing()+q.GetReady()+q.GetProving() == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond): // polling a remote status
		}
	}
}

func sample(done int, elapsed time.Duration) SoakSample {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return SoakSample{Done: done, Elapsed: elapsed, RSS: currentRSS(), HeapInuse: int64(ms.HeapInuse),
		Goroutines: runtime.NumGoroutine()}
}

// Write prints the soak's table: the seed, the samples and the outcomes.
func (r *SoakResult) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "soak: seed %d\n\n", r.Seed)
	fmt.Fprintf(&b, "%8s  %9s  %9s  %10s  %10s\n", "ops", "elapsed", "RSS MiB", "heap MiB", "goroutines")
	fmt.Fprintf(&b, "%8s  %9s  %9s  %10s  %10s\n", "--------", "---------", "---------", "----------", "----------")
	for i, s := range r.Samples {
		label := strconv.Itoa(s.Done)
		if i == len(r.Samples)-1 {
			label += " idle"
		}
		fmt.Fprintf(&b, "%8s  %9s  %9.1f  %10.1f  %10d\n", label, s.Elapsed.Round(time.Second), float64(s.RSS)/(1<<20),
			float64(s.HeapInuse)/(1<<20), s.Goroutines)
	}
	names := make([]string, 0, len(r.Outcomes))
	for k := range r.Outcomes {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Fprintf(&b, "\n%-28s  %6s\n", "outcome", "count")
	for _, k := range names {
		fmt.Fprintf(&b, "%-28s  %6d\n", k, r.Outcomes[k])
	}
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "FAILURE %s\n", f)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Level reports whether the soak ended where it started: no failure,
// goroutines within slack of the first sample's, and RSS at most growth
// above the median sample's.
func (r *SoakResult) Level(goroutineSlack int, growth float64) error {
	if len(r.Failures) > 0 {
		return fmt.Errorf("soak: %d unexpected outcomes, the first: %s", len(r.Failures), r.Failures[0])
	}
	if len(r.Samples) < 2 {
		return errors.New("soak: fewer than two samples")
	}
	first, last := r.Samples[0], r.Samples[len(r.Samples)-1]
	if last.Goroutines > first.Goroutines+goroutineSlack {
		return fmt.Errorf("soak: %d goroutines at the end, %d at the start", last.Goroutines, first.Goroutines)
	}
	mid := r.Samples[len(r.Samples)/2]
	if float64(last.RSS) > float64(mid.RSS)*growth {
		return fmt.Errorf("soak: RSS %d at the end, %d half-way", last.RSS, mid.RSS)
	}
	return nil
}
