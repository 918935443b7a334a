package groth16

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/sync/errgroup"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// ErrKeyMismatch means an assignment does not fit the proving key's shape.
var ErrKeyMismatch = errors.New("groth16: assignment does not match proving key")

// ProveOption configures Prove.
type ProveOption func(*proveConfig) error

type proveConfig struct {
	ws *Workspace
}

// WithWorkspace makes Prove take its host scratch from ws (see Workspace).
func WithWorkspace(ws *Workspace) ProveOption {
	return func(c *proveConfig) error {
		if ws == nil {
			return errors.New("nil workspace")
		}
		c.ws = ws
		return nil
	}
}

// Prove computes a proof for asg under pk. The blinding scalars r and s are
// the first two scalars drawn from rnd (64 bytes each), so a fixed rnd gives
// a deterministic proof; use crypto/rand.Reader in production.
//
// Prove consumes asg.A, asg.B and asg.C (the backend may overwrite them).
// The quotient is computed first, then the three G1 MSMs (L‖H, A, B₁) run
// concurrently on backend, and the G2 MSM (B₂) runs last on all of its cores.
// A QuotientLHBackend computes the quotient inside its L‖H call instead,
// concurrently with A and B₁, and h stays with the backend. A BPairBackend
// computes B₁ and B₂ in one call, concurrently with the other G1 MSMs.
// gnark v0.14 runs all four at once; on 2 cores, moving B₂ out of the crowd
// measured up to 5% faster at 2^18 constraints and equal at 2^16, while all
// four one after another was slower at 2^16 (docs/perf.md, "Prover (CPU)").
// asg must come from r1cs.Solve, which has already checked that it
// satisfies the circuit.
//
// Prove checks ctx before each stage (the quotient, the G1 MSMs, the G2
// MSM, the assembly) and passes it to every backend call, which stops at its
// own next stage boundary; a Prove whose ctx is done returns an error
// wrapping ctx.Err(), and backend and workspace stay usable for the next
// Prove. The Trace in ctx (WithTrace) receives each backend call as a phase
// (PhaseQuotient, PhaseMSMA, …), the backend's own sub-phases, and
// PhaseProve at the end. Prove is safe for concurrent use with distinct
// workspaces (and a backend that is, as Backend requires).
func Prove(ctx context.Context, pk *ProvingKey, asg *r1cs.Assignment, backend Backend, rnd io.Reader, opts ...ProveOption) (*Proof, error) {
	start := time.Now()
	if err := stageCheck(ctx, "start"); err != nil {
		return nil, fmt.Errorf("prove: %w", err)
	}
	var cfg proveConfig
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, fmt.Errorf("prove: %w", err)
		}
	}
	ws := cfg.ws
	if ws == nil {
		ws = &Workspace{}
	}
	if !ws.mu.TryLock() {
		return nil, fmt.Errorf("prove: %w", ErrWorkspaceBusy)
	}
	defer ws.mu.Unlock()
	if err := checkShape(pk, asg); err != nil {
		return nil, fmt.Errorf("prove: %w", err)
	}
	r, err := randomScalar(rnd)
	if err != nil {
		return nil, fmt.Errorf("prove: draw r: %w", err)
	}
	s, err := randomScalar(rnd)
	if err != nil {
		return nil, fmt.Errorf("prove: draw s: %w", err)
	}
	var m msmSums
	if err := m.prove(ctx, pk, asg, backend, ws); err != nil {
		return nil, fmt.Errorf("prove: %w", err)
	}
	if err := stageCheck(ctx, "assembly"); err != nil {
		return nil, fmt.Errorf("prove: %w", err)
	}
	proof := assemble(pk, &r, &s, &m.a, &m.b1, &m.lh, &m.b2)
	PhaseDone(ctx, PhaseInfo{Phase: PhaseProve, Start: start, Duration: time.Since(start), Points: pk.DomainSize})
	return proof, nil
}

// prove computes the four MSM sums of asg's proof (and the quotient they
// need) on backend, its host vectors in ws. Its host work comes first and
// is reported as PhaseHost: the wire vector (asg's own, WireVector, or a
// copy) and its compactions for A and B.
func (m *msmSums) prove(ctx context.Context, pk *ProvingKey, asg *r1cs.Assignment, backend Backend, ws *Workspace) error {
	start := time.Now()
	// A fused backend (QuotientLHBackend) keeps h to itself: the wires
	// suffice, and asg's own wire vector serves when it has one. Otherwise
	// one buffer public‖private‖h: its first part is the wire vector, and
	// private‖h, once the quotient is copied in, the L‖H scalars.
	nv := pk.NbVariables()
	fb, lh, fused := fusedLH(pk, backend)
	wire, buf, err := ws.wires(pk, asg, fused)
	if err != nil {
		return err
	}
	wireA, fillA, err := ws.compactLater(wire, pk.InfinityA, &ws.a, &ws.keptA)
	if err != nil {
		return err
	}
	wireB, fillB, err := ws.compactLater(wire, pk.InfinityB, &ws.b, &ws.keptB)
	if err != nil {
		return err
	}
	compact := func() {
		for _, f := range []func(){fillA, fillB} {
			if f != nil {
				f()
			}
		}
	}
	rp, overlap := backend.(ReadyPrefetcher)
	overlap = overlap && fused
	if !overlap {
		compact()
	}
	PhaseDone(ctx, PhaseInfo{Phase: PhaseHost, Start: start, Duration: time.Since(start), Points: nv})
	var ready chan struct{}
	if overlap {
		// The compactions feed only the A and B MSMs, which come after the
		// fused call: they run beside it, and the A and B wires go ahead
		// to the device during its L‖H MSM if they are done by then.
		ready = make(chan struct{})
		go func() {
			defer close(ready)
			cstart := time.Now()
			compact()
			PhaseDone(ctx, PhaseInfo{Phase: PhaseCompact, Start: cstart, Duration: time.Since(cstart), Points: len(wireA) + len(wireB)})
		}()
		// Every return waits for the copies: ws's vectors outlive none.
		defer func() { <-ready }()
		if err := rp.PrefetchReady(ctx, ready, wireA, wireB); err != nil {
			return fmt.Errorf("prefetch: %w", err)
		}
	}
	lhPoints := pk.NbPrivate + pk.DomainSize - 1
	var lhSum func(context.Context) error
	if fused {
		lhSum = func(ctx context.Context) error {
			return timed(ctx, PhaseQuotientLH, lhPoints, func(ctx context.Context) (err error) {
				if m.lh, err = fb.MSMQuotientLH(ctx, lh, wire[pk.NbPublic:], asg.A, asg.B, asg.C); err != nil {
					return fmt.Errorf("quotient and msm L‖H: %w", err)
				}
				return nil
			})
		}
	} else {
		if err := quotientInto(ctx, buf[nv:], pk, backend, asg); err != nil {
			return err
		}
		lhSum = func(ctx context.Context) error {
			return timed(ctx, PhaseMSMLH, lhPoints, func(ctx context.Context) error {
				return msmLH(ctx, pk, backend, buf[pk.NbPublic:], &m.lh)
			})
		}
	}
	return m.run(ctx, pk, backend, wireA, wireB, lhSum, fused, ready)
}

// wires returns asg's wire vector (public‖private) for a proof under pk:
// asg's own where a fused backend keeps h (fused) and asg has one, else in
// ws's buffer, which then holds public‖private‖h (buf; nil with asg's own),
// its h part to be filled by the quotient unless fused.
func (ws *Workspace) wires(pk *ProvingKey, asg *r1cs.Assignment, fused bool) (wire, buf []fr.Element, err error) {
	nv := pk.NbVariables()
	wire = asg.WireVector()
	if wire != nil && fused {
		return wire, nil, nil
	}
	size := nv + pk.DomainSize - 1
	if fused {
		size = nv
	}
	if buf, err = ws.grow(&ws.buf, size); err != nil {
		return nil, nil, err
	}
	wire = buf[:nv]
	copyAll(wire, asg.Public)
	copyAll(wire[pk.NbPublic:], asg.Private)
	return wire, buf, nil
}

// fusedLH returns backend as a QuotientLHBackend, with pk's L‖H bases,
// when it is one and pk's L and H are adjacent (one L‖H MSM).
func fusedLH(pk *ProvingKey, backend Backend) (QuotientLHBackend, []bls12381.G1Affine, bool) {
	fb, ok := backend.(QuotientLHBackend)
	lh, adjacent := pk.lhBases()
	return fb, lh, ok && adjacent
}

// quotientInto computes h = QuotientH(asg.A, asg.B, asg.C) and copies its
// n−1 low coefficients into dst.
func quotientInto(ctx context.Context, dst []fr.Element, pk *ProvingKey, backend Backend, asg *r1cs.Assignment) error {
	if err := stageCheck(ctx, "quotient"); err != nil {
		return err
	}
	var h []fr.Element
	if err := timed(ctx, PhaseQuotient, pk.DomainSize, func(ctx context.Context) (err error) {
		h, err = backend.QuotientH(ctx, asg.A, asg.B, asg.C)
		return err
	}); err != nil {
		return fmt.Errorf("quotient: %w", err)
	}
	if len(h) != pk.DomainSize {
		return fmt.Errorf("quotient has %d coefficients, want %d", len(h), pk.DomainSize)
	}
	copyAll(dst, h[:pk.DomainSize-1])
	return nil
}

// msmSums holds the four MSM results of one proof.
type msmSums struct {
	a, b1, lh bls12381.G1Jac
	b2        bls12381.G2Jac
}

// run computes the three G1 MSMs (L‖H by lhSum, A over wireA, B₁ over
// wireB) at once, then the G2 MSM (B₂) alone, or with a BPairBackend B₁
// and B₂ in one call with the others. A Prefetcher whose fused call is
// lhSum (fused) is told the A and B wires and makes that call first, so
// that they can go to the device while it computes, then the A MSM, then
// the B ones; if run then fails, the announcement is dropped, since the
// vectors are about to be reused.
//
// ready, when not nil, is closed once wireA and wireB hold their values: run
// announced them already (ReadyPrefetcher), and the A and B MSMs wait for it.
func (m *msmSums) run(ctx context.Context, pk *ProvingKey, b Backend, wireA, wireB []fr.Element, lhSum func(context.Context) error, fused bool, ready chan struct{}) (err error) {
	if err := stageCheck(ctx, "G1 MSMs"); err != nil {
		return err
	}
	// The group's context ends on every return, early ones too.
	gparent, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(gparent)
	msmA := func(ctx context.Context) error {
		return timed(ctx, PhaseMSMA, len(wireA), func(ctx context.Context) error { return msm1(ctx, b, "A", pk.G1.A, wireA, &m.a) })
	}
	if pf, ok := b.(Prefetcher); ok && fused {
		if ready == nil {
			if err := pf.Prefetch(ctx, wireA, wireB); err != nil {
				return fmt.Errorf("prefetch: %w", err)
			}
		}
		defer func() {
			if err != nil { // a cancelled ctx must not stop the drop
				err = errors.Join(err, dropPrefetch(context.WithoutCancel(ctx), pf))
			}
		}()
		if err := lhSum(ctx); err != nil {
			return err
		}
		if ready != nil {
			<-ready
		}
		// A before the B MSMs, not beside them: they share one device
		// either way, and the B MSMs, whose G2 chunks leave a streaming
		// device's link room for the next proof's first quotient vector
		// (prover/gpu's PrefetchQuotient), then run last, when the next
		// proof is more often solved and ready to send it.
		if err := msmA(gctx); err != nil {
			return err
		}
	} else {
		g.Go(func() error { return lhSum(gctx) })
		g.Go(func() error { return msmA(gctx) })
	}
	pair := m.goB(gctx, g, pk, b, wireB)
	if err := g.Wait(); err != nil || pair {
		return err
	}
	if err := stageCheck(ctx, "msm B2"); err != nil {
		return err
	}
	return timed(ctx, PhaseMSMB2, len(wireB), func(ctx context.Context) (err error) {
		if m.b2, err = b.MSMG2(ctx, pk.G2.B, wireB); err != nil {
			return fmt.Errorf("msm B2: %w", err)
		}
		return nil
	})
}

// goB starts the G1 MSM over the B wires in g, or with a BPairBackend the
// B pair call, which computes the G2 MSM too; it reports whether it did.
func (m *msmSums) goB(ctx context.Context, g *errgroup.Group, pk *ProvingKey, b Backend, wireB []fr.Element) bool {
	bp, pair := b.(BPairBackend)
	if !pair {
		g.Go(func() error {
			return timed(ctx, PhaseMSMB1, len(wireB), func(ctx context.Context) error { return msm1(ctx, b, "B1", pk.G1.B, wireB, &m.b1) })
		})
		return false
	}
	g.Go(func() error {
		return timed(ctx, PhaseMSMBPair, len(wireB), func(ctx context.Context) (err error) {
			if m.b1, m.b2, err = bp.MSMB(ctx, pk.G1.B, pk.G2.B, wireB); err != nil {
				return fmt.Errorf("msm B1 and B2: %w", err)
			}
			return nil
		})
	})
	return true
}

// dropPrefetch withdraws pf's announcement after a failed or cancelled run.
func dropPrefetch(ctx context.Context, pf Prefetcher) error {
	if err := pf.Prefetch(ctx); err != nil {
		return fmt.Errorf("drop prefetch: %w", err)
	}
	return nil
}

// stageCheck returns an error wrapping ctx.Err(), naming the stage about to
// start, when ctx is done.
func stageCheck(ctx context.Context, stage string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("before %s: %w", stage, err)
	}
	return nil
}

// timed runs f, one backend call of Prove phase ph over points, with a
// context that names the phase (WithCall), and reports the phase to ctx's
// trace when f succeeds.
func timed(ctx context.Context, ph Phase, points int, f func(context.Context) error) error {
	start := time.Now()
	if err := f(WithCall(ctx, ph)); err != nil {
		return err
	}
	PhaseDone(ctx, PhaseInfo{Phase: ph, Start: start, Duration: time.Since(start), Points: points})
	return nil
}

func msm1(ctx context.Context, b Backend, name string, bases []bls12381.G1Affine, scalars []fr.Element, out *bls12381.G1Jac) (err error) {
	if *out, err = b.MSMG1(ctx, bases, scalars); err != nil {
		return fmt.Errorf("msm %s: %w", name, err)
	}
	return nil
}

// msmLH computes ΣL·private + ΣH·h, given privH = private‖h. Keys from Setup
// and ReadFrom store L and H adjacently, so one MSM over L‖H does it (cheaper
// than two: one bucket reduction, and a larger window); other keys take two.
func msmLH(ctx context.Context, pk *ProvingKey, b Backend, privH []fr.Element, out *bls12381.G1Jac) error {
	if lh, ok := pk.lhBases(); ok {
		return msm1(ctx, b, "L‖H", lh, privH, out)
	}
	var sumH bls12381.G1Jac
	if err := msm1(ctx, b, "L", pk.G1.L, privH[:pk.NbPrivate], out); err != nil {
		return err
	}
	if err := msm1(ctx, b, "H", pk.G1.H, privH[pk.NbPrivate:], &sumH); err != nil {
		return err
	}
	out.AddAssign(&sumH)
	return nil
}

func checkShape(pk *ProvingKey, asg *r1cs.Assignment) error {
	switch {
	case len(asg.Public) != pk.NbPublic:
		return fmt.Errorf("%w: %d publics, key has %d", ErrKeyMismatch, len(asg.Public), pk.NbPublic)
	case len(asg.Private) != pk.NbPrivate:
		return fmt.Errorf("%w: %d privates, key has %d", ErrKeyMismatch, len(asg.Private), pk.NbPrivate)
	case len(asg.A) != pk.DomainSize || len(asg.B) != pk.DomainSize || len(asg.C) != pk.DomainSize:
		return fmt.Errorf("%w: evaluation vectors of length %d, key domain %d", ErrKeyMismatch, len(asg.A), pk.DomainSize)
	}
	return nil
}

// assemble combines the MSM results into the proof:
// A = α + ΣA + rδ, B = β + ΣB₂ + sδ, C = Σ(L‖H) + sA + r(β + ΣB₁ + sδ) − rsδ.
func assemble(pk *ProvingKey, r, s *fr.Element, sumA, sumB1, sumLH *bls12381.G1Jac, sumB2 *bls12381.G2Jac) *Proof {
	var rBig, sBig, rsBig big.Int
	r.BigInt(&rBig)
	s.BigInt(&sBig)
	var rs fr.Element
	rs.Mul(r, s)
	rs.BigInt(&rsBig)

	ar := g1Mul(&pk.G1.Delta, &rBig)
	ar.AddMixed(&pk.G1.Alpha)
	ar.AddAssign(sumA)

	bs1 := g1Mul(&pk.G1.Delta, &sBig)
	bs1.AddMixed(&pk.G1.Beta)
	bs1.AddAssign(sumB1)

	var bs bls12381.G2Jac
	bs.FromAffine(&pk.G2.Delta)
	bs.ScalarMultiplication(&bs, &sBig)
	bs.AddMixed(&pk.G2.Beta)
	bs.AddAssign(sumB2)

	var krs, t bls12381.G1Jac
	krs.Set(sumLH)
	t.ScalarMultiplication(&ar, &sBig)
	krs.AddAssign(&t)
	t.ScalarMultiplication(&bs1, &rBig)
	krs.AddAssign(&t)
	t = g1Mul(&pk.G1.Delta, &rsBig)
	krs.SubAssign(&t)

	p := &Proof{}
	p.A.FromJacobian(&ar)
	p.B.FromJacobian(&bs)
	p.C.FromJacobian(&krs)
	return p
}

func g1Mul(p *bls12381.G1Affine, s *big.Int) bls12381.G1Jac {
	var j bls12381.G1Jac
	j.FromAffine(p)
	j.ScalarMultiplication(&j, s)
	return j
}
