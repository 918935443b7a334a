package gpubench

import (
	"errors"
	"fmt"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/cuzk-dev/cuzk/bench/benchinput"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// check compares the host path's results with gnark-crypto (MSMs on
// scalars folded to the tile) and the quotient with the probe, writing
// each phase's outcome into checks. It runs before the next proof
// overwrites h.
func (r *partitionRun) check(host Sums, checks *[NumPhases]string) error {
	p, pk := r.p, r.p.PK
	var errs []error
	mark := func(ph Phase, how string, err error) {
		checks[ph] = "ok: " + how
		if err != nil {
			checks[ph], errs = "MISMATCH", append(errs, fmt.Errorf("%s: %w", PhaseShort[ph], err))
		}
	}
	var err error
	if len(host.H) != pk.DomainSize {
		err = fmt.Errorf("%w: h has %d coefficients, want %d", benchinput.ErrMismatch, len(host.H), pk.DomainSize)
	} else {
		err = r.probe.Check(host.H)
	}
	mark(PhQuotient, "h(ζ)·Z(ζ) = a(ζ)·b(ζ) − c(ζ)", err)
	wireB := p.Wire[:len(pk.G1.B)]
	for _, c := range []struct {
		ph   Phase
		call groth16.Phase
		ref  func() (bls12381.G1Jac, string, error)
	}{
		{PhA, groth16.PhaseMSMA, func() (bls12381.G1Jac, string, error) { return benchinput.RefG1(p.G1Tile, pk.G1.A, p.Wire, false) }},
		{PhB1, groth16.PhaseMSMB1, func() (bls12381.G1Jac, string, error) { return benchinput.RefG1(p.G1Tile, pk.G1.B, wireB, false) }},
		{PhLH, groth16.PhaseMSMLH, func() (bls12381.G1Jac, string, error) {
			return benchinput.RefG1Parts(p.G1Tile, p.Wire[1:], host.H[:min(len(host.H), pk.DomainSize-1)])
		}},
	} {
		want, how, err := c.ref()
		if got := host.G1[c.call]; err == nil && !want.Equal(&got) {
			err = fmt.Errorf("%w: %s", benchinput.ErrMismatch, how)
		}
		mark(c.ph, how, err)
	}
	want, how, err := benchinput.RefG2(p.G2Tile, pk.G2.B, wireB, false)
	if got := host.G2[groth16.PhaseMSMB2]; err == nil && !want.Equal(&got) {
		err = fmt.Errorf("%w: %s", benchinput.ErrMismatch, how)
	}
	mark(PhB2, how, err)
	return errors.Join(errs...)
}

// checkFused compares the fused run's results (nil: none ran) with the
// host path's: its L‖H, its A and B MSMs (which took their scalars
// prefetched) and its proof (sameProof).
func checkFused(host Sums, fused *Sums, sameProof bool, checks *[NumPhases]string) error {
	if fused == nil {
		return nil
	}
	var errs []error
	checks[PhQLH] = "ok: equals the host path's L‖H and proof"
	lh, hostLH := fused.G1[groth16.PhaseQuotientLH], host.G1[groth16.PhaseMSMLH]
	if !lh.Equal(&hostLH) || !sameProof {
		checks[PhQLH] = "MISMATCH"
		errs = append(errs, fmt.Errorf("quotient and msm L‖H: %w: L‖H or proof differs from the host path's", benchinput.ErrMismatch))
	}
	for _, c := range []struct {
		ph   Phase
		call groth16.Phase
	}{{PhA, groth16.PhaseMSMA}, {PhB1, groth16.PhaseMSMB1}} {
		a, b := fused.G1[c.call], host.G1[c.call]
		if !a.Equal(&b) {
			checks[c.ph] = "MISMATCH"
			errs = append(errs, fmt.Errorf("msm %s in the fused run: %w: differs from the host path", PhaseShort[c.ph], benchinput.ErrMismatch))
		}
	}
	a, b := fused.G2[groth16.PhaseMSMB2], host.G2[groth16.PhaseMSMB2]
	if !a.Equal(&b) {
		checks[PhB2] = "MISMATCH"
		errs = append(errs, fmt.Errorf("msm %s in the fused run: %w: differs from the host path", PhaseShort[PhB2], benchinput.ErrMismatch))
	}
	return errors.Join(errs...)
}
