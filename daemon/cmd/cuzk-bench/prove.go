package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

const proveSummary = `Proves porep-synth (a PoRep-shaped circuit) at -constraints on each -backend:
a development setup first (timed apart; cached in -keys as the binary key
encoding, so a second run loads it), then one warm-up proof and -runs timed
proofs per backend. Every proof is verified with the pairing check, and with
the same blinding r, s per run the GPU proof must equal the CPU proof byte for
byte. Phases are timed one at a time: synthesis (witness and a, b, c), the
quotient H (NTTs), each MSM (GPU: with its scalar upload and device time).
Without a GPU the gpu column says "no GPU" and the exit status is 3.
The development setup (fixed-base tables) grows linearly with the size:
about 7 s for the default 2^20 on a 16-core host; later runs load the cached
keys in seconds.`

// proveConfig holds the prove command's flags.
type proveConfig struct {
	target         int
	backends       []string
	runs           int
	keyDir         string
	seed, setupSed uint64
	pinned         bool // the GPU backend's workspace and synthesis vectors in pinned host memory
	hOnDevice      bool // the GPU backend's fused quotient and L‖H call
}

func proveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("prove", proveSummary, stderr)
	size := fs.String("constraints", "2^20", "porep-synth size: target constraints, 2^k or an integer (2^10 … 2^27)")
	backends := fs.String("backend", "cpu,gpu", "backends to run, comma-separated: cpu, gpu")
	runs := fs.Int("runs", 3, "timed proofs per backend, after one warm-up proof")
	keys := fs.String("keys", devkeys.Dir(), "directory caching development keys (\"\": no cache)")
	seed := fs.Uint64("seed", 1, "seed of the circuit's witness and of each run's blinding r, s")
	setupSeed := fs.Uint64("setup-seed", 1, "seed of the development setup's trapdoor (part of the key file name)")
	pinned := fs.Bool("pinned", true, "gpu: Prove's workspace and synthesis's a, b, c and wires in the backend's pinned host memory (false: the Go heap, uploads staged)")
	hOnDevice := fs.Bool("h-on-device", true, "gpu: the quotient and the L‖H MSM in one call, h kept on the device (false: h through the host)")
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	cfg := proveConfig{runs: *runs, keyDir: *keys, seed: *seed, setupSed: *setupSeed, pinned: *pinned, hOnDevice: *hOnDevice}
	var err error
	if cfg.target, err = parseSize(*size); err != nil {
		fmt.Fprintf(stderr, "cuzk-bench prove: -constraints: %v\n", err)
		return exitUsage
	}
	if cfg.backends, err = parseBackends(*backends); err != nil || cfg.runs < 1 {
		fmt.Fprintf(stderr, "cuzk-bench prove: %v\n", errors.Join(err, checkRuns(cfg.runs)))
		return exitUsage
	}
	return exitFor(stderr, "prove", runProve(ctx, cfg, stdout))
}

func parseBackends(s string) ([]string, error) {
	var out []string
	for _, b := range strings.Split(s, ",") {
		b = strings.TrimSpace(b)
		switch {
		case b != "cpu" && b != "gpu":
			return nil, fmt.Errorf("-backend: unknown backend %q (want cpu, gpu)", b)
		case !slices.Contains(out, b):
			out = append(out, b)
		}
	}
	return out, nil
}

func checkRuns(n int) error {
	if n < 1 {
		return fmt.Errorf("-runs %d: want at least 1", n)
	}
	return nil
}

// backendResult is what one backend's runs measured. Run 0 is the warm-up:
// its proof is verified and compared but its times are not kept.
type backendResult struct {
	name        string
	unavailable string // why the backend did not run ("no GPU"), else ""
	synth       samples
	prove       samples
	overlapped  samples // groth16.Prove on the bare backend: its calls overlap, as in a daemon
	// sameOverlapped counts overlapped proofs equal to their timed run's.
	sameOverlapped int
	verify         samples
	wall           [numPhases]samples
	upload         [numPhases]samples
	compute        [numPhases]samples
	points         [numPhases]int // each phase's size in the last run; 0: not run
	proofs         [][]byte
	failed         []string  // runs whose proof did not verify
	witness        wireShare // the warm-up's wire values
}

func runProve(ctx context.Context, cfg proveConfig, w io.Writer) error {
	c, err := porep.New(cfg.target, int64(cfg.seed))
	if err != nil {
		return fmt.Errorf("porep-synth: %w", err)
	}
	l := c.Layout
	fmt.Fprintf(w, "porep-synth %s: %d constraints, %d publics, domain %s (depth %d, %d challenges, %d labelled)\n",
		sizeString(cfg.target), l.Constraints(), l.Publics(), sizeString(r1cs.DomainSize(l.Constraints(), l.Publics())),
		l.Depth, l.Challenges, l.Labelled)
	pk, vk, info, err := devKeys(cfg.keyDir, c, cfg.setupSed)
	if err != nil {
		return err
	}
	printKeyInfo(w, info, pk)
	var results []*backendResult
	var gpuMissing error
	for _, name := range cfg.backends {
		res, err := runBackend(ctx, name, cfg, c, info.shape, pk, vk)
		if errors.Is(err, errNoGPU) {
			gpuMissing = err
			res = &backendResult{name: name, unavailable: "no GPU"}
		} else if err != nil {
			return fmt.Errorf("%s backend: %w", name, err)
		}
		results = append(results, res)
	}
	proveTable(pk, results).Write(w)
	for _, r := range results {
		if r.ran() {
			fmt.Fprintln(w, r.witness)
			break
		}
	}
	return errors.Join(summarize(w, results), gpuMissing)
}

// runBackend proves with one backend; the error matches errNoGPU when the
// GPU backend cannot run here.
func runBackend(ctx context.Context, name string, cfg proveConfig, c *porep.Circuit, sys *r1cs.System,
	pk *groth16.ProvingKey, vk *groth16.VerifyingKey) (*backendResult, error) {
	if name == "cpu" {
		be, err := cpu.New()
		if err != nil {
			return nil, err
		}
		return benchBackend(ctx, name, be, cfg, c, sys, pk, vk)
	}
	dev, err := openGPU()
	if err != nil {
		return nil, err
	}
	defer dev.Close() // after the prover's resources; its error changes no result
	be, err := newGPUProver(dev)
	if err != nil {
		return nil, err
	}
	res, err := benchBackend(ctx, name, be, cfg, c, sys, pk, vk)
	return res, errors.Join(err, be.Close())
}

// benchBackend runs one warm-up and cfg.runs timed proofs on be. The
// proofs share one groth16.Workspace and one synthesizer, as a daemon's
// worker proving one key after another would: from be's host memory when it
// has its own (the GPU backend's pinned memory) and cfg.pinned is set. With
// cfg.hOnDevice a backend that fuses the quotient with the L‖H MSM (the
// GPU's) does so.
func benchBackend(ctx context.Context, name string, be groth16.Backend, cfg proveConfig, c *porep.Circuit, sys *r1cs.System,
	pk *groth16.ProvingKey, vk *groth16.VerifyingKey) (_ *backendResult, err error) {
	sb := &serialBackend{inner: be}
	res := &backendResult{name: name}
	ws := &groth16.Workspace{}
	var alloc groth16.HostAllocator
	if a, ok := be.(groth16.HostAllocator); ok && cfg.pinned {
		ws, alloc = groth16.NewWorkspace(a), a
	}
	defer func() { err = errors.Join(err, ws.Close()) }()
	syn, err := newSynthesizer(c, sys, alloc)
	if err != nil {
		return nil, err
	}
	bare := be
	if !cfg.hOnDevice {
		bare = withoutFused(be)
	}
	for i := 0; i <= cfg.runs; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := proveOnce(ctx, res, i, sb, cfg.hOnDevice, ws, syn, pk, vk, devkeys.Rand(cfg.seed, uint64(i)+1)); err != nil {
			return nil, fmt.Errorf("run %d: %w", i, err)
		}
	}
	// The phase wrapper serializes the backend calls to time each one; these
	// runs repeat the timed ones on the bare backend, where groth16.Prove's
	// G1 MSMs overlap (and their host work with the device's), and must give
	// the same proofs.
	for i := 1; i <= cfg.runs; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := proveOverlapped(ctx, res, i, bare, ws, syn, pk, devkeys.Rand(cfg.seed, uint64(i)+1)); err != nil {
			return nil, fmt.Errorf("overlapped run %d: %w", i, err)
		}
	}
	return res, nil
}

// synthesizer solves porep-synth into one assignment reused from proof to
// proof (r1cs.WithBuffers), as a daemon's worker would. Given a host
// allocator (the GPU backend's pinned memory), the assignment's vectors come
// from it, so that the quotient's uploads of a, b, c and the wires' go by
// DMA without staging; otherwise from the Go heap, on the first solve.
type synthesizer struct {
	c   *porep.Circuit
	sys *r1cs.System
	asg *r1cs.Assignment // the buffers of the next solve; nil before a heap one's first
}

func newSynthesizer(c *porep.Circuit, sys *r1cs.System, alloc groth16.HostAllocator) (*synthesizer, error) {
	s := &synthesizer{c: c, sys: sys}
	if alloc == nil {
		return s, nil
	}
	n := sys.DomainSize()
	asg := &r1cs.Assignment{}
	for _, v := range []struct {
		dst *[]fr.Element
		n   int
	}{{&asg.Public, sys.NbPublic}, {&asg.Private, sys.NbPrivate}, {&asg.A, n}, {&asg.B, n}, {&asg.C, n}} {
		var err error
		if *v.dst, _, err = groth16.AllocVector(alloc, v.n); err != nil { // freed with the backend
			return nil, fmt.Errorf("synthesis vectors: %w", err)
		}
	}
	s.asg = asg
	return s, nil
}

// solve synthesizes the circuit into the reused buffers.
func (s *synthesizer) solve() (*r1cs.Assignment, error) {
	opts := []r1cs.SolveOption{r1cs.WithShape(s.sys)}
	if s.asg != nil {
		opts = append(opts, r1cs.WithBuffers(s.asg))
	}
	asg, err := r1cs.Solve(s.c, opts...)
	if err != nil {
		return nil, fmt.Errorf("synthesis: %w", err)
	}
	s.asg = asg
	return asg, nil
}

// proveOverlapped times groth16.Prove on be for run i and checks that the
// proof equals the timed run's.
func proveOverlapped(ctx context.Context, res *backendResult, i int, be groth16.Backend, ws *groth16.Workspace, syn *synthesizer,
	pk *groth16.ProvingKey, rnd io.Reader) error {
	asg, err := syn.solve()
	if err != nil {
		return err
	}
	start := time.Now()
	proof, err := groth16.Prove(ctx, pk, asg, be, rnd, groth16.WithWorkspace(ws))
	if err != nil {
		return err
	}
	res.overlapped = append(res.overlapped, time.Since(start))
	var buf bytes.Buffer
	if _, err := proof.WriteTo(&buf); err != nil {
		return fmt.Errorf("encode proof: %w", err)
	}
	if bytes.Equal(buf.Bytes(), res.proofs[i]) {
		res.sameOverlapped++
	}
	return nil
}

// proveOnce synthesizes, proves and verifies one proof and records it in
// res (times only when run > 0); fuse lets Prove fuse the quotient with the
// L‖H MSM where sb's backend can.
func proveOnce(ctx context.Context, res *backendResult, run int, sb *serialBackend, fuse bool, ws *groth16.Workspace, syn *synthesizer,
	pk *groth16.ProvingKey, vk *groth16.VerifyingKey, rnd io.Reader) error {
	start := time.Now()
	asg, err := syn.solve()
	if err != nil {
		return err
	}
	synth := time.Since(start)
	if run == 0 {
		res.witness = countWires(asg.Public, asg.Private)
	}
	public := asg.PublicInputs()
	start = time.Now()
	var rec phaseRecorder
	proof, err := groth16.Prove(rec.context(ctx), pk, asg, sb.backend(fuse), rnd, groth16.WithWorkspace(ws))
	if err != nil {
		return err
	}
	prove := time.Since(start)
	pt := rec.take()
	start = time.Now()
	if err := groth16.Verify(vk, proof, public); err != nil {
		res.failed = append(res.failed, fmt.Sprintf("run %d: %v", run, err))
	}
	verify := time.Since(start)
	var buf bytes.Buffer
	if _, err := proof.WriteTo(&buf); err != nil {
		return fmt.Errorf("encode proof: %w", err)
	}
	res.proofs = append(res.proofs, buf.Bytes())
	res.points = pt.points
	if run == 0 {
		return nil
	}
	res.synth, res.prove, res.verify = append(res.synth, synth), append(res.prove, prove), append(res.verify, verify)
	for ph := range numPhases {
		res.wall[ph] = append(res.wall[ph], pt.wall[ph])
		res.upload[ph] = append(res.upload[ph], pt.upload[ph])
		res.compute[ph] = append(res.compute[ph], pt.compute[ph])
	}
	return nil
}
