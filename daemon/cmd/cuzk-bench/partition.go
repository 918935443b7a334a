package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

const partitionSummary = `Runs the GPU work of one Groth16 partition with a synthetic key shaped like
a Filecoin PoRep C2 partition (32 GiB sector: about 130 M constraints in a
2^27 domain, about as many wires): QuotientH over 2^-log, the MSMs A, B in G1
and B in G2 over the wires, then one MSM over L‖H (the private wires and the
quotient's 2^-log − 1 coefficients), as groth16.Prove runs a key from Setup
or ReadFrom (L and H adjacent). Calls run one after another, each timed.

Bases are -tile random points tiled (timing does not depend on repeats);
a, b are random and c = a·b pointwise, as for a satisfied circuit. Wire
values are random field elements, or, with -bits f, a random bit (0 or 1)
for a fraction f of them: a real C2 witness is mostly the bits of its
SHA-256 gadgets, and the MSMs' cost follows the non-zero digits. The memory
needed is printed first, and the job is refused before any allocation if it
does not fit the GPU's free memory or the host's. With -pinned all (the
default) a, b, c and the buffer wires ‖ h (which holds the L‖H scalars) are
in the backend's pinned host memory, as a GPU worker holds them (synthesis
into pinned buffers, r1cs.WithBuffers, and a pinned groth16.Workspace; see
cuzk-bench prove), so that their uploads need no staging; -pinned scalars
pins only wires ‖ h, -pinned none pins nothing. With -h-on-device (the
default) the quotient and the L‖H MSM are one call, as Prove makes it on the
GPU backend (groth16.QuotientLHBackend): h stays on the GPU, the private
wires go up during the quotient's last transforms, and, as Prove does on the
GPU backend (groth16.Prefetcher), that call comes first and the A and B wires
go up while its L‖H MSM computes. The B MSMs in G1 and G2 are one call
(groth16.BPairBackend): one upload, one sort. The warm-up then runs both
ways and the fused L‖H must equal the host path's. Results are checked on the
warm-up run: every MSM against gnark-crypto's MultiExp on the scalars folded
to the tile (exact), the quotient by h(ζ)·Z(ζ) = a(ζ)·b(ζ) − c(ζ) at a random
ζ. The default run needs about 122 GiB of GPU and 94 GiB of host memory and
takes about two minutes on an H200 host (16 cores, 128 GiB RAM), much of it
generating and uploading ~75 GB of bases.`

// partitionConfig holds the partition command's flags.
type partitionConfig struct {
	shape partitionShape
	runs  int
	seed  uint64
	tile  int
	check bool
	bits  float64 // fraction of the wires that are 0 or 1
	pin   pinSet  // which vectors live in pinned host memory
	// hOnDevice fuses the quotient with the L‖H MSM (h stays on the GPU).
	hOnDevice bool
}

// pinSet says which of a partition's vectors are in pinned host memory.
type pinSet int

const (
	pinNone    pinSet = iota
	pinScalars        // wires ‖ h, every MSM's scalars: what a pinned Workspace holds
	pinAll            // also a, b, c
)

var pinNames = []string{"none", "scalars", "all"}

func parsePinSet(s string) (pinSet, error) {
	for i, n := range pinNames {
		if s == n {
			return pinSet(i), nil
		}
	}
	return 0, fmt.Errorf("-pinned %q: want one of %s", s, strings.Join(pinNames, ", "))
}

func partitionCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("partition", partitionSummary, stderr)
	logN := fs.Int("log", 27, "log2 of the evaluation domain (QuotientH size, H MSM 2^log − 1 points)")
	wires := fs.Int("wires", 0, "wires of the A MSM, L has one less (0: 31/32 of 2^log, about a PoRep C2 partition)")
	bFrac := fs.Float64("b-frac", 1, "fraction of the wires in the B MSMs (G1 and G2)")
	runs := fs.Int("runs", 2, "timed runs after the warm-up run")
	seed := fs.Uint64("seed", 1, "seed of the random bases and vectors")
	tile := fs.String("tile", "2^16", "distinct random points tiled into the bases")
	check := fs.Bool("check", true, "check the warm-up results against gnark-crypto")
	bits := fs.Float64("bits", 0, "fraction of the wire values that are random bits (0 or 1); the rest are random field elements")
	hOnDevice := fs.Bool("h-on-device", true, "the quotient and the L‖H MSM in one call, h kept on the GPU (false: h through the host)")
	pinned := fs.String("pinned", "all", "vectors in pinned host memory: none, scalars (wires ‖ h: every MSM's scalars), all (also a, b, c)")
	if code, stop := parseFlags(fs, args); stop {
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
		cfg.pin, err = parsePinSet(*pinned)
	}
	if err != nil {
		fmt.Fprintf(stderr, "cuzk-bench partition: %v\n", err)
		return exitUsage
	}
	cfg.runs, cfg.seed, cfg.check, cfg.bits, cfg.hOnDevice = *runs, *seed, *check, *bits, *hOnDevice
	return exitFor(stderr, "partition", runPartition(ctx, cfg, stdout))
}

func partitionFlags(logN, wires int, bFrac float64, tile string) (partitionConfig, error) {
	var cfg partitionConfig
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
	t, err := parseSize(tile)
	if err != nil || t < 2 {
		return cfg, fmt.Errorf("-tile: %v (want ≥ 2)", err)
	}
	cfg.shape = partitionShape{log: logN, wires: wires, bWires: max(1, int(float64(wires)*bFrac))}
	cfg.tile = t
	return cfg, nil
}

// partitionInputs are the synthetic key and vectors of one partition.
type partitionInputs struct {
	pk      *groth16.ProvingKey // only the MSM bases and DomainSize are set
	lh      []bls12381.G1Affine // L‖H; pk.G1.L and pk.G1.H are views of it
	g1Tile  []bls12381.G1Affine
	g2Tile  []bls12381.G2Affine
	a, b, c []fr.Element
	buf     []fr.Element // wires ‖ h, laid out as groth16.Prove's: buf[1:] are the L‖H scalars
	wire    []fr.Element // buf[:wires]
}

func runPartition(ctx context.Context, cfg partitionConfig, w io.Writer) error {
	dev, err := openGPU()
	if err != nil {
		return err
	}
	defer dev.Close() // nothing left to report after the results
	fmt.Fprintln(w, dev.Info())
	var free int64
	if err := dev.Do(func(c *driver.Ctx) (err error) { free, _, err = c.MemInfo(); return err }); err != nil {
		return fmt.Errorf("device memory: %w", err)
	}
	plan, err := planMemory(cfg.shape)
	if err != nil {
		return err
	}
	host := hostAvailable()
	fmt.Fprintf(w, "partition 2^%d: %d wires (%d in B)\n", cfg.shape.log, cfg.shape.wires, cfg.shape.bWires)
	printMemPlan(w, cfg.shape, plan, free, host)
	if err := checkFit(plan, free, host); err != nil {
		return err
	}
	gp, err := newGPUProver(dev)
	if err != nil {
		return err
	}
	start := time.Now()
	in, err := newPartitionInputs(cfg, gp)
	if err != nil {
		return errors.Join(err, gp.Close())
	}
	fmt.Fprintf(w, "inputs: %s tiles tiled to the key, random a, b, c = a·b, wires (%.0f %% bits), pinned: %s, in %s\n",
		sizeString(cfg.tile), 100*cfg.bits, pinNames[cfg.pin], ms(time.Since(start)))
	// gp.Close frees the pinned inputs: nothing reads them after the runs.
	res, err := runPartitionWork(ctx, cfg, in, gp, w)
	err = errors.Join(err, gp.Close())
	if res != nil {
		printPartition(w, in.pk, res)
	}
	return err
}

// newPartitionInputs makes the key and the vectors, those that cfg.pin
// names in the pinned host memory of host.
func newPartitionInputs(cfg partitionConfig, host groth16.HostAllocator) (*partitionInputs, error) {
	s := cfg.shape
	in := &partitionInputs{g1Tile: randomG1(cfg.tile, cfg.seed+1), g2Tile: randomG2(cfg.tile, cfg.seed+2)}
	pk := &groth16.ProvingKey{DomainSize: s.n()}
	pk.G1.A = tiled(in.g1Tile, s.wires)
	pk.G1.B = tiled(in.g1Tile, s.bWires)
	in.lh = tiled(in.g1Tile, s.lh())
	pk.G1.L, pk.G1.H = in.lh[:s.wires-1], in.lh[s.wires-1:]
	pk.G2.B = tiled(in.g2Tile, s.bWires)
	in.pk = pk
	vec := func(n int, pinned bool) ([]fr.Element, error) {
		if !pinned {
			return make([]fr.Element, n), nil
		}
		v, _, err := groth16.AllocVector(host, n) // freed with the backend
		return v, err
	}
	var err error
	for _, v := range []struct {
		dst    *[]fr.Element
		n      int
		pinned bool
	}{
		{&in.buf, s.wires + s.n() - 1, cfg.pin >= pinScalars},
		{&in.a, s.n(), cfg.pin == pinAll}, {&in.b, s.n(), cfg.pin == pinAll}, {&in.c, s.n(), cfg.pin == pinAll},
	} {
		if *v.dst, err = vec(v.n, v.pinned); err != nil {
			return nil, fmt.Errorf("partition inputs: %w", err)
		}
	}
	fillRandom(in.a, cfg.seed+3)
	fillRandom(in.b, cfg.seed+4)
	parallelFor(s.n(), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			in.c[i].Mul(&in.a[i], &in.b[i])
		}
	})
	in.wire = in.buf[:s.wires]
	fillRandom(in.wire, cfg.seed+5)
	setBits(in.wire, cfg.bits, cfg.seed+6)
	return in, nil
}
