package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/client"
	"github.com/cuzk-dev/cuzk/internal/stats"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
)

// remoteFlags are the flags every daemon client command takes.
type remoteFlags struct {
	addr, token, circuit, constraints string
	params                            paramList
}

func (r *remoteFlags) add(fs *flag.FlagSet, withCircuit bool) {
	fs.StringVar(&r.addr, "addr", "", "daemon address(es), comma separated: unix:PATH, host:port, or dns:///name:port")
	fs.StringVar(&r.token, "token", os.Getenv("CUZK_DAEMON_TOKEN"), "bearer token (default $CUZK_DAEMON_TOKEN, the daemon's own setting)")
	if withCircuit {
		fs.StringVar(&r.circuit, "circuit", "porep-synth", "circuit id")
		fs.StringVar(&r.constraints, "constraints", "4096", "porep-synth's constraints (2^k or an integer)")
		fs.Var(&r.params, "param", "circuit parameter name=value (repeatable; other circuits)")
	}
}

func (r *remoteFlags) dial() (*client.Client, error) {
	if r.addr == "" {
		return nil, fmt.Errorf("-addr is required")
	}
	return client.Dial(strings.Split(r.addr, ","), client.Options{Token: r.token})
}

func (r *remoteFlags) resolve() (*registry.Resolved, error) {
	params := map[string]uint64{}
	for k, v := range r.params {
		params[k] = v
	}
	if r.circuit == "porep-synth" && params["constraints"] == 0 {
		n, err := stats.ParseCount(r.constraints)
		if err != nil {
			return nil, err
		}
		params["constraints"] = uint64(n)
	}
	return registry.Default().Resolve(r.circuit, params)
}

// paramList is repeated name=value flags.
type paramList map[string]uint64

func (p *paramList) String() string { return fmt.Sprint(map[string]uint64(*p)) }
func (p *paramList) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	n, err := strconv.ParseUint(v, 10, 64)
	if !ok || err != nil {
		return fmt.Errorf("want name=unsigned integer, got %q", s)
	}
	if *p == nil {
		*p = paramList{}
	}
	(*p)[k] = n
	return nil
}

// hasAddr reports whether args name a daemon (-addr / --addr).
func hasAddr(args []string) bool {
	for _, a := range args {
		if a == "-addr" || a == "--addr" || strings.HasPrefix(a, "-addr=") || strings.HasPrefix(a, "--addr=") {
			return true
		}
	}
	return false
}

// remoteProveCmd submits N proofs at concurrency C to daemons and
// verifies every one with the verifying key fetched from the daemon.
func remoteProveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("prove", "Submit -n proofs at concurrency -c to a daemon (or several), verify each, print throughput,\nlatency quantiles and the daemon's per-phase breakdown. Exits 0 only if every proof verified.", stderr)
	var rf remoteFlags
	rf.add(fs, true)
	n := fs.Int("n", 4, "proofs")
	conc := fs.Int("c", 1, "proofs in flight at once")
	seed := fs.Int64("seed", 1, "inputs are the circuit's examples for seed, seed+1, ...")
	prio := fs.String("priority", "normal", "low, normal, high or critical")
	retries := fs.Int("retries", 2, "resubmissions after a daemon goes away")
	partitions := fs.Int("partitions", 1, "partitions per proof (the C2 shape: 10), each verified")
	quiet := fs.Bool("quiet", false, "no progress bar")
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	p, ok := pb.Priority_value["PRIORITY_"+strings.ToUpper(*prio)]
	if !ok {
		fmt.Fprintf(stderr, "cuzk-bench prove: unknown priority %q\n", *prio)
		return exitUsage
	}
	circ, err := rf.resolve()
	if err != nil {
		return exitFor(stderr, "prove", err)
	}
	c, err := rf.dial()
	if err != nil {
		return exitFor(stderr, "prove", err)
	}
	defer c.Close()
	load := client.Load{Circuit: circ, N: *n, Concurrency: *conc, Seed: *seed, Priority: pb.Priority(p), Retries: *retries,
		Partitions:    *partitions,
		RequestPrefix: fmt.Sprintf("cuzk-bench-%d-%d", os.Getpid(), time.Now().UnixNano())}
	if !*quiet {
		bar := progressbar.NewOptions(*n, progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription("proofs"),
			progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
		load.Progress = func(done, _ int) { _ = bar.Set(done) } // the bar only draws
	}
	rep, err := client.RunLoad(ctx, c, load)
	if err != nil {
		return exitFor(stderr, "prove", err)
	}
	writeLoad(stdout, circ, rep, *conc)
	for _, f := range rep.Failures {
		fmt.Fprintln(stderr, "cuzk-bench prove:", f)
	}
	if len(rep.Failures) > 0 {
		fmt.Fprintf(stderr, "cuzk-bench prove: %d of %d proofs failed\n", len(rep.Failures), *n)
		return exitFail
	}
	fmt.Fprintf(stdout, "all %d proofs verified\n", *n)
	return exitOK
}

func writeLoad(w io.Writer, circ *registry.Resolved, rep *client.Report, conc int) {
	lat := rep.Latencies()
	devices := map[string]int{}
	for _, p := range rep.Proofs {
		devices[p.Result.GetDevice()]++
	}
	fmt.Fprintf(w, "%s: %d proofs at concurrency %d in %s: %.2f proofs/s\n", circ.Key, len(rep.Proofs), conc,
		rep.Wall.Round(time.Millisecond), rep.Throughput())
	fmt.Fprintf(w, "latency p50 %s  p90 %s  p99 %s   devices %v\n\n", stats.Quantile(lat, .5).Round(time.Microsecond),
		stats.Quantile(lat, .9).Round(time.Microsecond), stats.Quantile(lat, .99).Round(time.Microsecond), devices)
	t := rep.PhaseTable("phase (daemon)")
	_ = t.Write(w) // stdout: a failed write has nowhere to be reported
}

// statusCmd prints a daemon's GetStatus as JSON.
func statusCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("status", "Print a daemon's status (devices, queue, keys, embedded kernels and their pins) as JSON.", stderr)
	var rf remoteFlags
	rf.add(fs, false)
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	c, err := rf.dial()
	if err != nil {
		return exitFor(stderr, "status", err)
	}
	defer c.Close()
	st, err := c.GetStatus(ctx, &pb.GetStatusRequest{})
	if err != nil {
		return exitFor(stderr, "status", err)
	}
	return printJSON(stdout, stderr, "status", st)
}

// keyCmd preloads or evicts a circuit's key.
func keyCmd(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int {
	fs := newFlags(name, "Preload a circuit's key (-tier warm|hot) or evict it (-tier warm|cold); prints the key's state.", stderr)
	var rf remoteFlags
	rf.add(fs, true)
	tier := fs.String("tier", "", "preload: warm or hot (default hot on a GPU daemon); evict: warm or cold (default cold)")
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	circ, err := rf.resolve()
	if err != nil {
		return exitFor(stderr, name, err)
	}
	t := pb.KeyTier_KEY_TIER_UNSPECIFIED
	if *tier != "" {
		v, ok := pb.KeyTier_value["KEY_TIER_"+strings.ToUpper(*tier)]
		if !ok {
			fmt.Fprintf(stderr, "cuzk-bench %s: unknown tier %q\n", name, *tier)
			return exitUsage
		}
		t = pb.KeyTier(v)
	}
	c, err := rf.dial()
	if err != nil {
		return exitFor(stderr, name, err)
	}
	defer c.Close()
	pbc := &pb.Circuit{Id: circ.Def.ID, Params: circ.Params}
	var info *pb.KeyInfo
	if name == "preload" {
		info, err = c.PreloadKey(ctx, &pb.KeyRequest{Circuit: pbc, Tier: t})
	} else {
		info, err = c.EvictKey(ctx, &pb.EvictKeyRequest{Circuit: pbc, Tier: t})
	}
	if err != nil {
		return exitFor(stderr, name, err)
	}
	return printJSON(stdout, stderr, name, info)
}

// cancelCmd cancels jobs by id.
func cancelCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cancel", "Cancel jobs by id (arguments after the flags), wherever they are.", stderr)
	var rf remoteFlags
	rf.add(fs, false)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "cuzk-bench cancel: no job id")
		return exitUsage
	}
	c, err := rf.dial()
	if err != nil {
		return exitFor(stderr, "cancel", err)
	}
	defer c.Close()
	for _, id := range fs.Args() {
		r, err := c.CancelProof(ctx, &pb.CancelProofRequest{JobId: id})
		if err != nil {
			return exitFor(stderr, "cancel", err)
		}
		fmt.Fprintf(stdout, "%s %s\n", id, strings.ToLower(strings.TrimPrefix(r.GetState().String(), "JOB_STATE_")))
	}
	return exitOK
}

func printJSON(stdout, stderr io.Writer, cmd string, m proto.Message) int {
	b, err := protojson.MarshalOptions{Multiline: true}.Marshal(m)
	if err != nil {
		return exitFor(stderr, cmd, err)
	}
	fmt.Fprintln(stdout, string(b))
	return exitOK
}
