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

// SetupResult is what RunSetup measured. Setup is groth16.SetupWith's
// wall time: G1 and G2 are its fixed-base calls (the FixedBaser's wall
// time, uploads and table builds included), Rest its other work on the CPU
// (trapdoor, Lagrange basis at τ, column sums, the scalars of every key
// point). Encode is the keys' encoding and hashing afterwards, not part
// of Setup.
type SetupResult struct {
	Constraints, Domain    int
	G1Points, G2Points     int
	Compile, Setup, G1, G2 time.Duration
	Rest, Encode           time.Duration
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
	sum, size, took, err := setupHash(ctx, sys, cfg.Seed, timed)
	if err != nil {
		return res, err
	}
	res.Setup, res.Encode = took[0], took[1]
	res.G1, res.G2, res.G1Points, res.G2Points = timed.g1, timed.g2, timed.g1Pts, timed.g2Pts
	res.Rest = res.Setup - res.G1 - res.G2
	res.KeySHA256, res.KeyBytes = sum, size
	if !cfg.Check {
		return res, nil
	}
	if res.CPUKeySHA256, _, took, err = setupHash(ctx, sys, cfg.Seed, groth16.CPUFixedBase{}); err != nil {
		return res, fmt.Errorf("reference %w", err)
	}
	res.CPUSetup, res.Checked = took[0], true
	res.Same = res.CPUKeySHA256 == res.KeySHA256
	return res, nil
}

// setupHash runs the setup and returns the SHA-256 and length of the
// proving key's encoding followed by the verifying key's, and the times of
// the setup and of the encoding with its hash.
func setupHash(ctx context.Context, sys *r1cs.System, seed uint64, fb groth16.FixedBaser) (
	sum [32]byte, size int64, took [2]time.Duration, err error) {
	start := time.Now()
	pk, vk, err := groth16.SetupWith(ctx, sys, devkeys.Rand(seed, 0), fb)
	if err != nil {
		return sum, 0, took, err
	}
	took[0] = time.Since(start)
	start = time.Now()
	h := sha256.New()
	n1, err := pk.WriteTo(h)
	if err != nil {
		return sum, 0, took, fmt.Errorf("encode proving key: %w", err)
	}
	n2, err := vk.WriteTo(h)
	if err != nil {
		return sum, 0, took, fmt.Errorf("encode verifying key: %w", err)
	}
	copy(sum[:], h.Sum(nil))
	took[1] = time.Since(start)
	return sum, n1 + n2, took, nil
}
