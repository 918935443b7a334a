package groth16

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/sync/errgroup"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// BatchBackend is a Backend that computes the MSMs of several proofs over
// the same bases in one call. prover/gpu does, for a key whose bases it
// streams from the host: each chunk of bases then crosses the link once for
// the whole batch instead of once per proof. ProveBatch uses it for the A
// and B MSMs; results are exactly those of the single calls.
type BatchBackend interface {
	Backend
	// MSMG1Batch returns Σ scalars[v][i]·bases[i] for each vector v;
	// len(scalars[v]) == len(bases).
	MSMG1Batch(ctx context.Context, bases []bls12381.G1Affine, scalars [][]fr.Element) ([]bls12381.G1Jac, error)
	// MSMBBatch is MSMB for each vector of scalars.
	MSMBBatch(ctx context.Context, g1 []bls12381.G1Affine, g2 []bls12381.G2Affine, scalars [][]fr.Element) (
		[]bls12381.G1Jac, []bls12381.G2Jac, error)
}

// BatchProof is one proof of a ProveBatch call.
type BatchProof struct {
	// Ctx is the proof's own context: its trace (WithTrace) receives the
	// proof's phases, and once it is done the proof leaves the batch at
	// the next stage boundary (the batch's shared calls stop only when
	// every proof's context is done).
	Ctx context.Context
	// Asg is consumed as by Prove.
	Asg *r1cs.Assignment
	// Workspace is the proof's host scratch (nil: a new one). The proofs
	// of a batch need distinct workspaces.
	Workspace *Workspace
	// Free, when not nil, is called once, as soon as the batch no longer
	// reads Asg's vectors: after the proof's own quotient and L‖H MSM
	// where its A and B wires are copies in the workspace, else at the
	// end (a caller solving the next proof into those vectors may start).
	Free func()
}

// Batch is the proofs of one ProveBatch call: Proofs to start with, and
// Join, when not nil, asked for one more after each proof's own part while
// the batch holds fewer than Max (0: len(Proofs)): it returns a proof that
// is ready now, or false, and must not wait for one. A batch so grows while
// it runs: the next proof of the key, solved beside the first one's
// quotient and L‖H, still shares the A and B calls.
type Batch struct {
	Proofs []BatchProof
	Join   func() (BatchProof, bool)
	Max    int
}

// ProveBatch computes the proofs of b under pk, as Prove would one by one
// with the same rnd: each proof draws r and s from rnd when its own part
// starts, in the batch's order, so that a batch's proofs equal those of
// Prove calls in that order. Each proof's host work, quotient and L‖H MSM
// run in turn (they hold the backend's work vectors), joined proofs after
// the first ones; then the A and B MSMs of all of them run together, as one
// call per MSM on a BatchBackend (each proof's trace is charged an equal
// share of such a call's phases, with PhaseInfo.Batch set), else one proof
// after another.
//
// The results are in the batch's order, joined proofs last: proofs[i] is
// nil where errs[i] is not. A proof whose Ctx is done fails alone,
// wrapping Ctx's error; a backend failure fails every proof not yet made,
// and leaves the backend to the caller's recovery. ctx ends the whole
// batch.
func ProveBatch(ctx context.Context, pk *ProvingKey, b Batch, backend Backend, rnd io.Reader) (proofs []*Proof, errs []error) {
	start := time.Now()
	max := b.Max
	if max < len(b.Proofs) {
		max = len(b.Proofs)
	}
	var items []*batchItem
	for _, bp := range b.Proofs {
		items = append(items, &batchItem{BatchProof: bp})
	}
	defer func() {
		for _, it := range items {
			it.free()
			if it.ws != nil {
				it.ws.mu.Unlock()
			}
		}
	}()
	results := func() ([]*Proof, []error) {
		proofs, errs := make([]*Proof, len(items)), make([]error, len(items))
		for i, it := range items {
			proofs[i], errs[i] = it.proof, it.err
		}
		return proofs, errs
	}
	failAll := func(err error) ([]*Proof, []error) {
		for _, it := range items {
			it.proof, it.err = nil, err
		}
		return results()
	}
	for i := 0; i < len(items); i++ {
		it := items[i]
		if it.Ctx == nil {
			it.Ctx = ctx
		}
		var err error
		if it.r, err = randomScalar(rnd); err == nil {
			it.s, err = randomScalar(rnd)
		}
		if err != nil {
			return failAll(fmt.Errorf("prove: draw r and s: %w", err))
		}
		it.err = it.solo(ctx, pk, backend)
		if it.err != nil && it.Ctx.Err() == nil && ctx.Err() == nil && !errors.Is(it.err, ErrKeyMismatch) && !errors.Is(it.err, ErrWorkspaceBusy) {
			return failAll(it.err) // the backend failed: no proof of the batch is made
		}
		if i == len(items)-1 && len(items) < max && b.Join != nil && ctx.Err() == nil {
			if bp, ok := b.Join(); ok {
				items = append(items, &batchItem{BatchProof: bp})
			}
		}
	}
	var live []*batchItem
	for _, it := range items {
		if it.err == nil {
			live = append(live, it)
		}
	}
	if len(live) > 0 {
		if err := sharedMSMs(ctx, pk, backend, live); err != nil {
			for _, it := range live {
				it.err = fmt.Errorf("prove: %w", err)
			}
			return results()
		}
	}
	for _, it := range live {
		if it.err = stageCheck(it.Ctx, "assembly"); it.err != nil {
			it.err = fmt.Errorf("prove: %w", it.err)
			continue
		}
		it.proof = assemble(pk, &it.r, &it.s, &it.m.a, &it.m.b1, &it.m.lh, &it.m.b2)
		PhaseDone(it.Ctx, PhaseInfo{Phase: PhaseProve, Start: start, Duration: time.Since(start), Points: pk.DomainSize, Batch: len(items)})
	}
	return results()
}

// batchItem is one proof of a batch as it goes.
type batchItem struct {
	BatchProof
	r, s         fr.Element
	ws           *Workspace // locked while the batch runs
	m            msmSums
	wireA, wireB []fr.Element
	freed        bool
	proof        *Proof
	err          error
}

// free hands the proof's assignment back (BatchProof.Free), once.
func (it *batchItem) free() {
	if !it.freed && it.Free != nil {
		it.Free()
	}
	it.freed = true
}

// solo does the proof's own part: its host vectors, then its quotient and
// L‖H MSM with the A and B compactions beside them (no prefetch in a batch:
// the next proof's quotient takes the work vectors they would go to).
func (it *batchItem) solo(ctx context.Context, pk *ProvingKey, backend Backend) error {
	for _, c := range []context.Context{ctx, it.Ctx} {
		if err := stageCheck(c, "start"); err != nil {
			return fmt.Errorf("prove: %w", err)
		}
	}
	ws := it.Workspace
	if ws == nil {
		ws = &Workspace{}
	}
	if !ws.mu.TryLock() {
		return fmt.Errorf("prove: %w", ErrWorkspaceBusy)
	}
	it.ws = ws
	asg := it.Asg
	if err := checkShape(pk, asg); err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	start := time.Now()
	nv := pk.NbVariables()
	fb, lh, fused := fusedLH(pk, backend)
	wire, buf, err := ws.wires(pk, asg, fused)
	if err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	var fills [2]func()
	if it.wireA, fills[0], err = ws.compactLater(wire, pk.InfinityA, &ws.a, &ws.keptA); err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	if it.wireB, fills[1], err = ws.compactLater(wire, pk.InfinityB, &ws.b, &ws.keptB); err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	// A set with no points at infinity reads the wire vector whole; where
	// that is the assignment's own, the workspace takes a copy, so that the
	// assignment goes back after the proof's own part (the next partition
	// then solves beside the batch and may join it) rather than at the
	// batch's end. (porep-c2: A has none, 4.3 GB copied beside the L‖H.)
	for k, v := range []*[]fr.Element{&it.wireA, &it.wireB} {
		if !aliases(wire, asg.WireVector(), *v) {
			continue
		}
		dst, err := ws.grow([]*wsVec{&ws.a, &ws.b}[k], len(*v))
		if err != nil {
			return fmt.Errorf("prove: %w", err)
		}
		src := *v
		*v, fills[k] = dst, func() { copyAll(dst, src) }
	}
	PhaseDone(it.Ctx, PhaseInfo{Phase: PhaseHost, Start: start, Duration: time.Since(start), Points: nv})
	// The compactions feed only the shared MSMs: they run beside the
	// proof's quotient and L‖H, off the device's path, as in Prove; every
	// return waits for them (ws's vectors outlive none).
	compacted := make(chan struct{})
	go func() {
		defer close(compacted)
		cstart := time.Now()
		for _, f := range fills {
			if f != nil {
				f()
			}
		}
		PhaseDone(it.Ctx, PhaseInfo{Phase: PhaseCompact, Start: cstart, Duration: time.Since(cstart), Points: len(it.wireA) + len(it.wireB)})
	}()
	defer func() { <-compacted }()
	lhPoints := pk.NbPrivate + pk.DomainSize - 1
	if fused {
		if err := stageCheck(it.Ctx, "quotient and L‖H"); err != nil {
			return fmt.Errorf("prove: %w", err)
		}
		err = timed(it.Ctx, PhaseQuotientLH, lhPoints, func(c context.Context) (err error) {
			if it.m.lh, err = fb.MSMQuotientLH(c, lh, wire[pk.NbPublic:], asg.A, asg.B, asg.C); err != nil {
				return fmt.Errorf("quotient and msm L‖H: %w", err)
			}
			return nil
		})
	} else if err = quotientInto(it.Ctx, buf[nv:], pk, backend, asg); err == nil {
		err = timed(it.Ctx, PhaseMSMLH, lhPoints, func(c context.Context) error {
			return msmLH(c, pk, backend, buf[pk.NbPublic:], &it.m.lh)
		})
	}
	if err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	// The A and B wires, copies in the workspace, are all the batch reads
	// of the proof from here: the assignment goes back.
	<-compacted
	it.free()
	return nil
}

// aliases reports whether v is the assignment's own wire vector (own; nil:
// it has none), which wire is then.
func aliases(wire, own, v []fr.Element) bool {
	return own != nil && len(v) > 0 && unsafe.SliceData(wire) == unsafe.SliceData(own) &&
		unsafe.SliceData(v) == unsafe.SliceData(own)
}

// sharedMSMs computes the A and B MSMs of the live proofs: on a
// BatchBackend in one call per MSM, with a context that ends once every
// proof's context has (or ctx), and a trace that charges each proof an
// equal share; else one proof after another, each in its own context.
func sharedMSMs(ctx context.Context, pk *ProvingKey, backend Backend, live []*batchItem) error {
	bb, ok := backend.(BatchBackend)
	if !ok || len(live) == 1 {
		for _, it := range live {
			noLH := func(context.Context) error { return nil }
			if err := it.m.run(it.Ctx, pk, backend, it.wireA, it.wireB, noLH, false, nil); err != nil {
				if it.Ctx.Err() != nil && ctx.Err() == nil {
					return nil // this proof alone stops; its assembly check reports it
				}
				return err
			}
		}
		return nil
	}
	bctx, cancel := allDone(ctx, live)
	defer cancel()
	bctx = context.WithValue(bctx, traceKey{}, shareTrace(live))
	wiresA, wiresB := make([][]fr.Element, len(live)), make([][]fr.Element, len(live))
	for i, it := range live {
		wiresA[i], wiresB[i] = it.wireA, it.wireB
	}
	if err := stageCheck(bctx, "G1 MSMs"); err != nil {
		return err
	}
	var g errgroup.Group
	g.Go(func() error {
		return timed(bctx, PhaseMSMA, len(wiresA[0]), func(c context.Context) error {
			sums, err := bb.MSMG1Batch(c, pk.G1.A, wiresA)
			if err != nil {
				return fmt.Errorf("msm A (a batch of %d): %w", len(live), err)
			}
			for i, it := range live {
				it.m.a = sums[i]
			}
			return nil
		})
	})
	g.Go(func() error {
		return timed(bctx, PhaseMSMBPair, len(wiresB[0]), func(c context.Context) error {
			s1, s2, err := bb.MSMBBatch(c, pk.G1.B, pk.G2.B, wiresB)
			if err != nil {
				return fmt.Errorf("msm B1 and B2 (a batch of %d): %w", len(live), err)
			}
			for i, it := range live {
				it.m.b1, it.m.b2 = s1[i], s2[i]
			}
			return nil
		})
	})
	err := g.Wait()
	if err != nil && ctx.Err() == nil && bctx.Err() != nil {
		return nil // every proof was cancelled: each reports its own context's error
	}
	return err
}

// allDone returns a context that ends when ctx does or once every proof's
// context has ended.
func allDone(ctx context.Context, live []*batchItem) (context.Context, context.CancelFunc) {
	bctx, cancel := context.WithCancel(ctx)
	go func() {
		for _, it := range live {
			select {
			case <-it.Ctx.Done():
			case <-bctx.Done():
				return
			}
		}
		cancel()
	}()
	return bctx, cancel
}

// shareTrace is the trace of a batch's shared calls: each proof's trace
// receives every phase with an equal share of its duration and Batch set,
// so that sums over the proofs of a batch count its device time once.
func shareTrace(live []*batchItem) *Trace {
	n := len(live)
	return &Trace{PhaseDone: func(info PhaseInfo) {
		info.Duration /= time.Duration(n)
		info.Batch = n
		for _, it := range live {
			if t := ContextTrace(it.Ctx); t != nil && t.PhaseDone != nil {
				t.PhaseDone(info)
			}
		}
	}}
}
