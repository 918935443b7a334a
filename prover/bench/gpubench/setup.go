package gpubench

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// SetupConfig is one timed development setup of porep-synth.
type SetupConfig struct {
	Log   int    // porep-synth of about 2^Log constraints
	Seed  uint64 // the trapdoor's seed (devkeys.Rand(Seed, 0), as devkeys.Get)
	Check bool   // also run the CPU setup and compare the key bytes
}

// SetupResult is what RunSetup measured. G1 and G2 are the fixed-base
// calls (the FixedBaser's wall time, uploads and table builds included);
// Rest is the setup's other work on the CPU (trapdoor, Lagrange basis at
// τ, column sums, the scalars of every key point).
type SetupResult struct {
	Constraints, Domain    int
	G1Points, G2Points     int
	Compile, Setup, G1, G2 time.Duration
	Rest                   time.Duration
	KeySHA256              [32]byte // of the proving key's and then the verifying key's encoding
	KeyBytes               int64
	CPUSetup               time.Duration // with Check: the CPU setup's time
	CPUKeySHA256           [32]byte      // with Check
	Checked, Same          bool          // with Check: whether the key bytes are equal
}

// timedFixedBase records the wall time and points of each call to fb.
type timedFixedBase struct {
	fb           groth16.FixedBaser
	g1, g2       time.Duration
	g1Pts, g2Pts int
}

func (t *timedFixedBase) FixedBaseG1(ctx context.Context, base *bls12381.G1Affine, s []fr.Element) ([]bls12381.G1Affine, error) {
	start := time.Now()
	p, err := t.fb.FixedBaseG1(ctx, base, s)
	t.g1 += time.Since(start)
	t.g1Pts += len(s)
	return p, err
}

func (t *timedFixedBase) FixedBaseG2(ctx context.Context, base *bls12381.G2Affine, s []fr.Element) ([]bls12381.G2Affine, error) {
	start := time.Now()
	p, err := t.fb.FixedBaseG2(ctx, base, s)
	t.g2 += time.Since(start)
	t.g2Pts += len(s)
	return p, err
}

// RunSetup compiles porep-synth at 2^cfg.Log constraints and times
// groth16.SetupWith on fb (nil: the CPU), split into the fixed-base calls
// and the rest. With cfg.Check it then runs the CPU setup for the same seed
// and compares the keys' bytes by hash (the first keys are dropped first,
// so that two keys never sit in memory together). It stops once ctx is
// done.
func RunSetup(ctx context.Context, cfg SetupConfig, fb groth16.FixedBaser) (SetupResult, error) {
	var res SetupResult
	if cfg.Log < 4 || cfg.Log > 27 {
		return res, fmt.Errorf("setup: log %d: want 4 … 27", cfg.Log)
	}
	start := time.Now()
	c, err := porep.New(1<<cfg.Log, 1)
	if err != nil {
		return res, fmt.Errorf("setup: porep-synth 2^%d: %w", cfg.Log, err)
	}
	sys, err := r1cs.Compile(c)
	if err != nil {
		return res, fmt.Errorf("setup: compile porep-synth 2^%d: %w", cfg.Log, err)
	}
	res.Compile, res.Constraints, res.Domain = time.Since(start), sys.NbRows(), sys.DomainSize()
	if fb == nil {
		fb = groth16.CPUFixedBase{}
	}
	timed := &timedFixedBase{fb: fb}
	start = time.Now()
	sum, size, err := setupHash(ctx, sys, cfg.Seed, timed)
	if err != nil {
		return res, err
	}
	res.Setup = time.Since(start)
	res.G1, res.G2, res.G1Points, res.G2Points = timed.g1, timed.g2, timed.g1Pts, timed.g2Pts
	res.Rest = res.Setup - res.G1 - res.G2
	res.KeySHA256, res.KeyBytes = sum, size
	if !cfg.Check {
		return res, nil
	}
	start = time.Now()
	if res.CPUKeySHA256, _, err = setupHash(ctx, sys, cfg.Seed, groth16.CPUFixedBase{}); err != nil {
		return res, fmt.Errorf("reference %w", err)
	}
	res.CPUSetup, res.Checked = time.Since(start), true
	res.Same = res.CPUKeySHA256 == res.KeySHA256
	return res, nil
}

// setupHash runs the setup and returns the SHA-256 and length of the
// proving key's encoding followed by the verifying key's.
func setupHash(ctx context.Context, sys *r1cs.System, seed uint64, fb groth16.FixedBaser) ([32]byte, int64, error) {
	pk, vk, err := groth16.SetupWith(ctx, sys, devkeys.Rand(seed, 0), fb)
	if err != nil {
		return [32]byte{}, 0, err
	}
	h := sha256.New()
	n1, err := pk.WriteTo(h)
	if err != nil {
		return [32]byte{}, 0, fmt.Errorf("encode proving key: %w", err)
	}
	n2, err := vk.WriteTo(h)
	if err != nil {
		return [32]byte{}, 0, fmt.Errorf("encode verifying key: %w", err)
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, n1 + n2, nil
}
