package groth16

import (
	"context"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Backend is the math a Groth16 prover needs; prover/cpu implements it with
// gnark-crypto, prover/gpu with CUDA. Results must be exact (a GPU proof equals
// the CPU proof byte for byte).
//
// Prove calls QuotientH first, then MSMG1 three times concurrently (L‖H in
// one call, A, B₁), then, once those have returned, MSMG2 alone, so
// implementations must be safe for concurrent use or serialize internally.
// (A QuotientLHBackend gets one MSMQuotientLH call in place of QuotientH and
// the L‖H MSMG1; a BPairBackend one MSMB call in place of B₁'s MSMG1 and
// the MSMG2, concurrently with the other G1 MSMs.)
// Bases slices come from a ProvingKey and stay unchanged for the key's
// lifetime, so an implementation may keep them resident, keyed by their
// address and length. Scalars are
// fr.Elements in Montgomery form, as gnark-crypto stores them.
//
// Every method takes the context of the Prove call that makes it. A method
// whose ctx is done returns an error wrapping ctx.Err() at its next stage
// boundary (between transforms, between an MSM's kernels), having finished
// or abandoned what it started for that call, and the Backend stays usable:
// a later call with a live context succeeds. A method reports its own
// sub-phases, if it times any, to the Trace in ctx (PhaseDone; ContextCall
// names the Prove phase of the call), with its own record of the work in
// PhaseInfo.Detail if it keeps one, so that they reach the right proof
// when calls of several proofs overlap.
type Backend interface {
	// QuotientH returns the n coefficients of h = (a·b − c)/Z, lowest degree
	// first, given the evaluation vectors a, b, c over the domain of size
	// n = len(a) (a power of two), Z = X^n − 1. The domain is {ω^i} with
	// ω = fft.Generator(n) of gnark-crypto, the one Setup uses; the coset used
	// internally is the implementation's choice. Inputs may be overwritten.
	// The top coefficient is zero for a satisfied system.
	QuotientH(ctx context.Context, a, b, c []fr.Element) ([]fr.Element, error)
	// MSMG1 returns Σ scalars[i]·bases[i]; len(bases) == len(scalars).
	MSMG1(ctx context.Context, bases []bls12381.G1Affine, scalars []fr.Element) (bls12381.G1Jac, error)
	// MSMG2 returns Σ scalars[i]·bases[i]; len(bases) == len(scalars).
	MSMG2(ctx context.Context, bases []bls12381.G2Affine, scalars []fr.Element) (bls12381.G2Jac, error)
}

// QuotientLHBackend is a Backend that computes the L‖H MSM straight from
// the quotient, so that h never crosses to the host and back (prover/gpu
// keeps it on the device: at a 2^27 domain that is 4.3 GB each way and a
// host copy saved). Prove uses it for keys with L and H adjacent, in place
// of QuotientH and the L‖H MSMG1, concurrently with the A and B₁ MSMs.
type QuotientLHBackend interface {
	Backend
	// MSMQuotientLH returns Σ lh[i]·s[i] where s = private ‖ h[:n−1] and h
	// = QuotientH(a, b, c), n = len(a); len(lh) = len(private) + n − 1.
	// Inputs may be overwritten, as by QuotientH.
	MSMQuotientLH(ctx context.Context, lh []bls12381.G1Affine, private, a, b, c []fr.Element) (bls12381.G1Jac, error)
}

// BPairBackend is a Backend that computes the two MSMs over the B wires, in
// G1 and in G2, in one call: their scalars are the same, so prover/gpu sends
// them to the device once and, where both MSMs take the same window shape,
// sorts their digits once. Prove uses it in place of the two MSM calls, and
// runs it concurrently with the other G1 MSMs.
type BPairBackend interface {
	Backend
	// MSMB returns Σ scalars[i]·g1[i] and Σ scalars[i]·g2[i];
	// len(g1) == len(g2) == len(scalars).
	MSMB(ctx context.Context, g1 []bls12381.G1Affine, g2 []bls12381.G2Affine, scalars []fr.Element) (bls12381.G1Jac, bls12381.G2Jac, error)
}

// Prefetcher is a Backend that can send scalar vectors to the device ahead
// of the calls that use them, while an earlier call computes (prover/gpu:
// during the L‖H MSM of its MSMQuotientLH, when the PCIe link is idle).
// Prove announces the A and B wires before the fused quotient and L‖H call
// and makes that call first, then the others.
type Prefetcher interface {
	Backend
	// Prefetch announces scalar vectors of MSM calls to come. The caller
	// leaves them unchanged until those calls have returned. A Prefetch
	// of no vectors drops what an earlier one announced or sent ahead (Prove
	// makes one when it stops early, before the reuse of its vectors).
	Prefetch(ctx context.Context, scalars ...[]fr.Element) error
}

// ReadyPrefetcher is a Prefetcher that takes vectors still being written:
// PrefetchReady announces scalars that hold their values once ready is
// closed. The backend sends them ahead only if ready is closed when it
// would send them, without waiting, and otherwise leaves them to the calls
// that use them. Prove announces the A and B wires this way and compacts
// them while the fused quotient and L‖H call runs.
type ReadyPrefetcher interface {
	Prefetcher
	PrefetchReady(ctx context.Context, ready <-chan struct{}, scalars ...[]fr.Element) error
}
