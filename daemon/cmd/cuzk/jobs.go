package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/client"
	"github.com/cuzk-dev/cuzk/internal/progress"
	"github.com/cuzk-dev/cuzk/internal/stats"
)

var proveCommand = &command{name: "prove", daemon: true, setup: setupProve,
	summary: "prove -n proofs (-c at once) and verify each: job ids, throughput, latency, phases",
	detail: `Proves -n proofs of the circuit's example inputs (seed, seed+1, ...) with -c in flight at
once, spread over every -addr, and verifies each with the verifying key fetched from
the daemon and the public inputs computed here. Prints each proof's job id, device and
latency, then throughput, latency quantiles and the daemon's mean phases. Exits 0 only
if every proof verified.`}

func setupProve(fs *flag.FlagSet) runFunc {
	var cf circuitFlags
	cf.add(fs)
	n := fs.Int("n", 1, "proofs")
	conc := fs.Int("c", 1, "proofs in flight at once")
	seed := fs.Int64("seed", 1, "inputs are the circuit's examples for seed, seed+1, ...")
	prio := fs.String("priority", "normal", "low, normal, high or critical")
	retries := fs.Int("retries", 2, "resubmissions after a daemon goes away")
	partitions := fs.Int("partitions", 1, "partitions per proof (the C2 shape: 10), each verified")
	quiet := fs.Bool("quiet", false, "no progress on stderr (none with -o json either): the steps and, for one proof on one daemon, its job's events")
	return func(ctx context.Context, e *env, args []string) error {
		out := e.out
		circ, err := cf.resolve(args)
		if err != nil {
			return err
		}
		if *n < 1 || *conc < 1 || *partitions < 1 {
			return usagef("-n, -c and -partitions must be at least 1")
		}
		p, err := enumFlag("priority", *prio, pb.Priority(0))
		if err != nil {
			return err
		}
		load := client.Load{Circuit: circ, N: *n, Concurrency: *conc, Seed: *seed, Priority: p, Retries: *retries,
			Partitions: *partitions, RequestPrefix: fmt.Sprintf("cuzk-%d-%d", os.Getpid(), time.Now().UnixNano())}
		if !*quiet && !out.json {
			stop := showProgress(&load, out.errw, e.oneDaemon)
			defer stop()
		}
		rep, err := client.RunLoad(ctx, e.c, load)
		if err != nil {
			return err
		}
		s := rep.Summary(circ.Key, *conc)
		if out.json {
			err = out.value(s)
		} else {
			writeLoad(out.w, s)
		}
		if len(s.Failures) > 0 {
			return errors.Join(append(rep.Failures, fmt.Errorf("%d of %d proofs failed", len(s.Failures), *n))...)
		}
		return err
	}
}

// writeLoad prints a load's proofs and figures for people.
func writeLoad(w io.Writer, s client.Summary) {
	devices := map[string]int{}
	for _, p := range s.Proofs {
		fmt.Fprintf(w, "proof %d: job %s on %s in %s, verified\n", p.Index, p.JobID, p.Device, stats.MsSig(time.Duration(p.LatencyNs)))
		devices[p.Device]++
	}
	fmt.Fprintf(w, "%s: %d proofs at concurrency %d in %s: %.2f proofs/s\n", s.Circuit, len(s.Proofs), s.Concurrency,
		time.Duration(s.WallNs).Round(time.Millisecond), s.PerSecond)
	fmt.Fprintf(w, "latency p50 %s  p90 %s  p99 %s   devices %v\n\n", s.Latency("p50").Round(time.Microsecond),
		s.Latency("p90").Round(time.Microsecond), s.Latency("p99").Round(time.Microsecond), devices)
	_ = s.PhaseTable("phase (daemon)").Write(w) // stdout: a failed write has nowhere to be reported
	if len(s.Failures) == 0 {
		fmt.Fprintf(w, "all %d proofs verified\n", len(s.Proofs))
	}
}

var submitCommand = &command{name: "submit", daemon: true, setup: setupSubmit,
	summary: "queue a proof and print its job id at once",
	detail: `Queues one proof and prints its job id (alone on its line; -o json: the job's id, state
and whether -request-id named a job already known). The input is -input FILE ("-": standard
input), else the circuit's example input for -seed (for -partitions P, the examples for
seed ... seed+P-1). Follow the job with "cuzk await", "cuzk watch" or "cuzk cancel", against
the same daemon.`}

func setupSubmit(fs *flag.FlagSet) runFunc {
	var cf circuitFlags
	cf.add(fs)
	seed := fs.Int64("seed", 1, "the example input's seed (without -input)")
	input := fs.String("input", "", "file holding the input bytes (\"-\": standard input)")
	prio := fs.String("priority", "normal", "low, normal, high or critical")
	partitions := fs.Int("partitions", 1, "partitions of the proof (the C2 shape: 10)")
	requestID := fs.String("request-id", "", "the caller's id: a repeat returns the same job")
	skipVerify := fs.Bool("skip-verify", false, "the daemon does not check the proof")
	return func(ctx context.Context, e *env, args []string) error {
		out := e.out
		circ, err := cf.resolve(args)
		if err != nil {
			return err
		}
		if *partitions < 1 {
			return usagef("-partitions %d: want at least 1", *partitions)
		}
		p, err := enumFlag("priority", *prio, pb.Priority(0))
		if err != nil {
			return err
		}
		var in []byte
		switch *input {
		case "":
			in, err = client.ExampleInput(circ, *seed, *partitions)
		case "-":
			in, err = io.ReadAll(os.Stdin)
		default:
			in, err = os.ReadFile(*input)
		}
		if err != nil {
			return fmt.Errorf("input: %w", err)
		}
		req := &pb.ProofRequest{RequestId: *requestID, Circuit: pbCircuit(circ), Input: in, Priority: p, SkipVerify: *skipVerify}
		if *partitions > 1 {
			req.Partitions = uint32(*partitions)
		}
		r, err := e.c.SubmitProof(ctx, req)
		if err != nil {
			return err
		}
		if out.json {
			return out.message(r)
		}
		out.text("%s", r.GetJobId())
		return nil
	}
}

var awaitCommand = &command{name: "await", args: "JOB", daemon: true, setup: setupAwait,
	summary: "wait for a job and print its result",
	detail: `Waits for the job to end and prints its result: the device, whether the daemon verified
the proof, the times, and the proof as A||B||C compressed in hex (-proof FILE writes those
bytes, a multi-partition job's proofs one after another). A failed or cancelled job exits 1.`}

func setupAwait(fs *flag.FlagSet) runFunc {
	proof := fs.String("proof", "", "write the compressed proof(s) to this file")
	return func(ctx context.Context, e *env, args []string) error {
		out := e.out
		if len(args) != 1 {
			return usagef("want one job id, have %d arguments", len(args))
		}
		res, err := e.c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: args[0]})
		if err != nil {
			return err
		}
		compressed := res.GetProofCompressed()
		if len(res.GetPartitions()) > 0 {
			compressed = res.GetProofsCompressed()
		}
		if *proof != "" {
			if err := os.WriteFile(*proof, compressed, 0o644); err != nil {
				return fmt.Errorf("write proof: %w", err)
			}
		}
		if out.json {
			return out.message(res)
		}
		t := res.GetTimings()
		out.text("job %s %s on %s: verified %t; total %s (queue %s, synthesis %s, prove %s)", res.GetJobId(),
			client.EnumName(res.GetState()), res.GetDevice(), res.GetVerified(), stats.MsSig(time.Duration(t.GetTotalNs())),
			stats.MsSig(time.Duration(t.GetQueueNs())), stats.MsSig(time.Duration(t.GetSynthesisNs())), stats.MsSig(time.Duration(t.GetProveNs())))
		if n := len(res.GetPartitions()); n > 0 {
			out.text("%d partitions, %d bytes of compressed proofs", n, len(compressed))
		} else {
			out.text("proof %x", compressed)
		}
		return nil
	}
}

var watchCommand = &command{name: "watch", args: "JOB", daemon: true, setup: setupWatch,
	summary: "stream a job's events until it ends",
	detail: `Prints the job's events as they happen (queued, key ready, synthesis done, proving, each
GPU phase, then done, failed or cancelled); -o json: one JSON object per line. A failed or
cancelled job exits 1.`}

func setupWatch(*flag.FlagSet) runFunc {
	return func(ctx context.Context, e *env, args []string) error {
		out := e.out
		if len(args) != 1 {
			return usagef("want one job id, have %d arguments", len(args))
		}
		stream, err := e.c.WatchProof(ctx, &pb.WatchProofRequest{JobId: args[0]})
		if err != nil {
			return err
		}
		var last *pb.ProofEvent
		for {
			ev, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			last = ev
			if err := writeEvent(out, ev); err != nil {
				return err
			}
		}
		switch last.GetKind() {
		case pb.EventKind_EVENT_KIND_FAILED:
			return fmt.Errorf("job %s failed: %s", args[0], last.GetError())
		case pb.EventKind_EVENT_KIND_CANCELLED:
			return fmt.Errorf("job %s cancelled", args[0])
		}
		return nil
	}
}

func writeEvent(out *output, ev *pb.ProofEvent) error {
	if out.json {
		b, err := client.JSON(ev, false)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out.w, "%s\n", b)
		return err
	}
	out.text("%s", eventLine(ev))
	return nil
}

// eventLine is a job event for people: its time, kind, partition, phase
// and duration, device and error.
func eventLine(ev *pb.ProofEvent) string {
	line := time.Unix(0, ev.GetUnixNano()).Format("15:04:05.000") + " " + client.EnumName(ev.GetKind())
	if ev.GetPartition() > 0 {
		line += fmt.Sprintf(" partition %d", ev.GetPartition())
	}
	if ev.GetPhase() != "" {
		line += " " + ev.GetPhase() + " " + stats.MsSig(time.Duration(ev.GetDurationNs()))
	}
	if ev.GetDevice() != "" {
		line += " on " + ev.GetDevice()
	}
	if ev.GetError() != "" {
		line += ": " + ev.GetError()
	}
	return line
}

// showProgress makes a load report on w (stderr) while it runs, so that
// no stretch of it is silent: its steps (the verifying key, which a
// daemon without the key makes first, then the inputs), and then, for one
// proof on one daemon, its job's events as they come (Watch), else each
// finished proof; between them, a line after 10 s without one (a live line on a
// terminal, where several proofs show a progress bar once they start).
// It returns the function that ends the reports.
func showProgress(load *client.Load, w io.Writer, oneDaemon bool) (stop func()) {
	tk := progress.Start(w, "prove: starting")
	load.Step = func(what string) {
		tk.Println("prove: " + what)
		tk.Set("prove: " + what)
	}
	if load.N == 1 && oneDaemon {
		load.Watch = func(job string, ev *pb.ProofEvent) {
			tk.Println("job " + job + ": " + eventLine(ev))
			tk.Set("prove: job " + job + " " + client.EnumName(ev.GetKind()))
		}
		return func() { tk.Stop() }
	}
	if progress.IsTerminal(w) {
		var bar *progressbar.ProgressBar
		say := load.Step
		load.Step = func(what string) {
			say(what)
			if what == client.StepProving { // the bar takes over the live line
				tk.Stop()
				bar = progressbar.NewOptions(load.N, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("proofs"),
					progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
			}
		}
		load.Progress = func(done, _ int) {
			if bar != nil {
				_ = bar.Set(done) // the bar only draws
			}
		}
		return func() { tk.Stop() }
	}
	load.Progress = func(done, total int) {
		tk.Println(fmt.Sprintf("prove: %d of %d proofs done", done, total))
		tk.Set(fmt.Sprintf("prove: %d of %d proofs done, the next in flight", done, total))
	}
	return func() { tk.Stop() }
}

var cancelCommand = &command{name: "cancel", args: "JOB...", daemon: true, setup: setupCancel,
	summary: "cancel jobs, wherever they are",
	detail: `Cancels each job (queued, synthesizing or proving) and prints its state after the request;
a job that has ended stays as it was.`}

func setupCancel(*flag.FlagSet) runFunc {
	return func(ctx context.Context, e *env, args []string) error {
		out := e.out
		if len(args) == 0 {
			return usagef("no job id")
		}
		type result struct {
			JobID string `json:"job_id"`
			State string `json:"state"`
		}
		var results []result
		for _, id := range args {
			r, err := e.c.CancelProof(ctx, &pb.CancelProofRequest{JobId: id})
			if err != nil {
				return fmt.Errorf("%s: %w", id, err)
			}
			results = append(results, result{id, client.EnumName(r.GetState())})
			out.text("%s %s", id, client.EnumName(r.GetState()))
		}
		if out.json {
			return out.value(results)
		}
		return nil
	}
}

// noArgs refuses arguments after a command's flags.
func noArgs(args []string) error {
	if len(args) > 0 {
		return usagef("unexpected arguments %q", args)
	}
	return nil
}
