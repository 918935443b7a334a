package client

import (
	"runtime"

	"bytes"
	"context"
	"errors"
	"fmt"
	"golang.org/x/sync/errgroup"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// Load is a stream of proofs to submit.
type Load struct {
	Circuit     *registry.Resolved
	N           int   // proofs
	Concurrency int   // in flight at once (default 1)
	Seed        int64 // inputs are Circuit.Example(Seed + i)
	Priority    pb.Priority
	// Partitions > 1 makes each proof a multi-partition job: partition k of
	// proof i has input Circuit.Example(Seed + i·Partitions + k).
	Partitions int
	// RequestPrefix makes request_ids (prefix-i), so a retry after a
	// daemon failure finds the job again; "" sends none.
	RequestPrefix string
	// Retries is how many times a proof is resubmitted after a transport
	// failure (a daemon gone): to the next healthy daemon.
	Retries  int
	Progress func(done, total int) // called after each proof; may be nil
	// Step, when set, is told what the load does before its proofs start:
	// fetching the verifying key (for which a daemon without the key makes
	// a development key first), building the inputs, proving.
	Step func(what string)
	// Watch, when set, gets every event of each proof's job as it happens
	// (queued, key ready, synthesis done, proving, each GPU phase, the
	// end): each proof is then submitted, watched and awaited on the
	// daemon that took it (see ProveWatched), so the load must name one
	// daemon.
	Watch func(jobID string, ev *pb.ProofEvent)
}

// StepProving is the last step Load.Step is told of: the proofs start.
const StepProving = "proving"

// Proof is one finished proof of a load.
type Proof struct {
	Index    int
	Latency  time.Duration // client-side, submission to result (before the client verifies it)
	End      time.Time     // when the result arrived
	Result   *pb.ProofResult
	Attempts int
}

// Report is the outcome of RunLoad.
type Report struct {
	Proofs   []Proof
	Failures []error
	Wall     time.Duration
}

// RunLoad submits l.N proofs at l.Concurrency, verifies each with the
// verifying key fetched from the daemon and against the public inputs the
// client computes itself, and reports. It returns an error only when the
// load could not start; failed proofs are in Report.Failures.
func RunLoad(ctx context.Context, c *Client, l Load) (*Report, error) {
	if l.Concurrency <= 0 {
		l.Concurrency = 1
	}
	pbc := &pb.Circuit{Id: l.Circuit.Def.ID, Params: l.Circuit.Params}
	step := func(what string) {
		if l.Step != nil {
			l.Step(what)
		}
	}
	step("fetching the verifying key of " + l.Circuit.Key + " (a daemon without the key makes a development key first)")
	vkr, err := c.GetVerifyingKey(ctx, &pb.KeyRequest{Circuit: pbc})
	if err != nil {
		return nil, fmt.Errorf("get verifying key: %w", err)
	}
	var vk groth16.VerifyingKey
	if _, err := vk.ReadFrom(bytes.NewReader(vkr.GetBinary())); err != nil {
		return nil, fmt.Errorf("decode verifying key: %w", err)
	}
	step("building the inputs and their public inputs")
	prep, err := prepare(ctx, l)
	if err != nil {
		return nil, err
	}
	step(StepProving)
	rep := &Report{}
	var mu sync.Mutex
	var next, done atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range l.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= l.N || ctx.Err() != nil {
					return
				}
				p, err := proveOne(ctx, c, l, pbc, &vk, i, prep[i])
				mu.Lock()
				if err != nil {
					rep.Failures = append(rep.Failures, fmt.Errorf("proof %d: %w", i, err))
				} else {
					rep.Proofs = append(rep.Proofs, p)
				}
				mu.Unlock()
				if l.Progress != nil {
					l.Progress(int(done.Add(1)), l.N)
				}
			}
		}()
	}
	wg.Wait()
	rep.Wall = time.Since(start)
	sort.Slice(rep.Proofs, func(a, b int) bool { return rep.Proofs[a].Index < rep.Proofs[b].Index })
	return rep, ctx.Err()
}

// prepared is one proof's input and the public inputs its instance has
// (per partition).
type prepared struct {
	input []byte
	want  [][]fr.Element
}

// prepare builds every input and its expected public inputs before the
// load starts (on all cores), so the client's own instance building is
// not timed and does not compete with the daemon during the load.
func prepare(ctx context.Context, l Load) ([]prepared, error) {
	out := make([]prepared, l.N)
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(runtime.NumCPU())
	for i := range out {
		g.Go(func() error {
			parts := max(1, l.Partitions)
			for k := range parts {
				in, err := l.Circuit.Example(l.Seed + int64(i*parts+k))
				if err != nil {
					return err
				}
				want, err := ExpectedPublic(l.Circuit, in)
				if err != nil {
					return err
				}
				out[i].input = append(out[i].input, in...)
				out[i].want = append(out[i].want, want)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("prepare inputs: %w", err)
	}
	return out, nil
}

func proveOne(ctx context.Context, c *Client, l Load, pbc *pb.Circuit, vk *groth16.VerifyingKey, i int, p prepared) (Proof, error) {
	var err error
	req := &pb.ProofRequest{Circuit: pbc, Input: p.input, Priority: l.Priority}
	if l.Partitions > 1 {
		req.Partitions = uint32(l.Partitions)
	}
	if l.RequestPrefix != "" {
		req.RequestId = fmt.Sprintf("%s-%d", l.RequestPrefix, i)
	}
	start := time.Now()
	var res *pb.ProofResult
	attempts := 0
	for {
		attempts++
		if l.Watch != nil {
			res, err = ProveWatched(ctx, c, req, l.Watch)
		} else {
			res, err = c.Prove(ctx, req)
		}
		if err == nil || attempts > l.Retries || !retryable(err) || ctx.Err() != nil {
			break
		}
	}
	end := time.Now()
	latency := end.Sub(start) // the client's own check below is not the daemon's latency
	if err != nil {
		return Proof{}, err
	}
	if l.Partitions > 1 {
		err = VerifyPartitions(vk, res, p.want)
	} else {
		err = VerifyResult(vk, res, p.want[0])
	}
	if err != nil {
		return Proof{}, err
	}
	return Proof{Index: i, Latency: latency, End: end, Result: res, Attempts: attempts}, nil
}

// ExpectedPublic returns the public inputs of c's instance for input when
// the circuit computes them natively (porep-synth does), else nil.
func ExpectedPublic(c *registry.Resolved, input []byte) ([]fr.Element, error) {
	circ, err := c.Circuit(input)
	if err != nil {
		return nil, err
	}
	if p, ok := circ.(interface{ PublicInputs() []fr.Element }); ok {
		return p.PublicInputs(), nil
	}
	return nil, nil
}

// VerifyResult checks a daemon's single-proof result: the proof's two
// encodings agree, the public inputs are want (when want is not nil), and
// the proof verifies under vk.
func VerifyResult(vk *groth16.VerifyingKey, res *pb.ProofResult, want []fr.Element) error {
	return verifyProof(vk, res.GetProof(), res.GetProofCompressed(), res.GetPublicInputs(), want)
}

// VerifyPartitions checks a multi-partition result: one proof per entry of
// want, in order, each as VerifyResult checks it, and proofs_compressed
// their compressed proofs concatenated.
func VerifyPartitions(vk *groth16.VerifyingKey, res *pb.ProofResult, want [][]fr.Element) error {
	parts := res.GetPartitions()
	if len(parts) != len(want) {
		return fmt.Errorf("daemon returned %d partition proofs, the job has %d", len(parts), len(want))
	}
	var all []byte
	for k, p := range parts {
		if err := verifyProof(vk, p.GetProof(), p.GetProofCompressed(), p.GetPublicInputs(), want[k]); err != nil {
			return fmt.Errorf("partition %d: %w", k, err)
		}
		all = append(all, p.GetProofCompressed()...)
	}
	if !bytes.Equal(all, res.GetProofsCompressed()) {
		return errors.New("proofs_compressed is not the partitions' compressed proofs in order")
	}
	return nil
}

func verifyProof(vk *groth16.VerifyingKey, enc, compressed []byte, publicInputs [][]byte, want []fr.Element) error {
	var proof groth16.Proof
	if _, err := proof.ReadFrom(bytes.NewReader(enc)); err != nil {
		return fmt.Errorf("decode proof: %w", err)
	}
	a, b, cc := proof.A.Bytes(), proof.B.Bytes(), proof.C.Bytes()
	comp := append(append(append([]byte(nil), a[:]...), b[:]...), cc[:]...)
	if !bytes.Equal(comp, compressed) || len(comp) != 192 {
		return errors.New("proof_compressed is not A‖B‖C of proof")
	}
	public := make([]fr.Element, len(publicInputs))
	for i, b := range publicInputs {
		if err := public[i].SetBytesCanonical(b); err != nil {
			return fmt.Errorf("public input %d: %w", i, err)
		}
	}
	if want != nil {
		if len(want) != len(public) {
			return fmt.Errorf("daemon returned %d public inputs, the instance has %d", len(public), len(want))
		}
		for i := range want {
			if !want[i].Equal(&public[i]) {
				return fmt.Errorf("public input %d differs from the instance's", i)
			}
		}
	}
	if err := groth16.Verify(vk, &proof, public); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	return nil
}
