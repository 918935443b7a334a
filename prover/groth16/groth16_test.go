package groth16_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"testing"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
	"github.com/cuzk-dev/cuzk/prover/r1cs/r1cstest"
)

// seeded returns a deterministic randomness source for reproducible keys
// and proofs.
func seeded(seed uint64) *mrand.ChaCha8 {
	var s [32]byte
	s[0] = byte(seed)
	s[1] = byte(seed >> 8)
	return mrand.NewChaCha8(s)
}

type fixture struct {
	sys *r1cs.System
	pk  *groth16.ProvingKey
	vk  *groth16.VerifyingKey
}

func setup(t testing.TB, c r1cs.Circuit) fixture {
	sys, err := r1cs.Compile(c)
	require.NoError(t, err)
	pk, vk, err := groth16.Setup(sys, seeded(1))
	require.NoError(t, err)
	return fixture{sys, pk, vk}
}

func prove(t testing.TB, f fixture, c r1cs.Circuit, rnd interface{ Read([]byte) (int, error) }) (*groth16.Proof, []fr.Element) {
	asg, err := r1cs.Solve(c, r1cs.WithShape(f.sys))
	require.NoError(t, err)
	be, err := cpu.New()
	require.NoError(t, err)
	pub := append([]fr.Element(nil), asg.PublicInputs()...)
	proof, err := groth16.Prove(context.Background(), f.pk, asg, be, rnd)
	require.NoError(t, err)
	return proof, pub
}

func TestRoundTrip(t *testing.T) {
	cases := []struct {
		name    string
		circuit r1cs.Circuit
	}{
		{"cubic", r1cstest.NewCubic(3)},
		{"chain1", &r1cstest.MulChain{N: 1, Seed: fr.NewElement(5)}},
		{"chain6", &r1cstest.MulChain{N: 6, Seed: fr.NewElement(5)}},
		{"chain100", &r1cstest.MulChain{N: 100, Seed: fr.NewElement(11)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t, tc.circuit)
			proof, pub := prove(t, f, tc.circuit, rand.Reader)
			require.NoError(t, groth16.Verify(f.vk, proof, pub))
		})
	}
}

// sparse has a public input and a private witness that no constraint uses,
// so its key holds points at infinity in A, B and L.
type sparse struct{}

func (sparse) Define(api r1cs.API) error {
	x := api.Private(fr.NewElement(6))
	api.Public(fr.NewElement(99))
	api.Private(fr.NewElement(1234)) // unused on purpose
	y := api.Public(fr.NewElement(36))
	api.Enforce(r1cs.V(x), r1cs.V(x), r1cs.V(y))
	return nil
}

func TestUnusedVariables(t *testing.T) {
	f := setup(t, sparse{})
	assert.True(t, f.pk.G1.L[1].IsInfinity(), "the unused private's L point")
	proof, pub := prove(t, f, sparse{}, rand.Reader)
	require.NoError(t, groth16.Verify(f.vk, proof, pub))
	pub[0].SetUint64(98) // the unconstrained public is still bound by its padding row
	assert.ErrorIs(t, groth16.Verify(f.vk, proof, pub), groth16.ErrInvalidProof)
}

func TestInfinityPointsAreSplit(t *testing.T) {
	f := setup(t, r1cstest.NewCubic(3))
	// Cubic: A holds x, x2, x3+x+One and every public (padding rows); B holds
	// x and One; so y and x3 have no B point.
	nbB := 0
	for _, inf := range f.pk.InfinityB {
		if !inf {
			nbB++
		}
	}
	assert.Equal(t, nbB, len(f.pk.G1.B))
	assert.Equal(t, nbB, len(f.pk.G2.B))
	assert.Equal(t, 2, nbB)
	assert.Len(t, f.pk.G1.H, f.pk.DomainSize-1)
	assert.Len(t, f.pk.G1.L, f.pk.NbPrivate)
}

func TestWrongPublicInputFails(t *testing.T) {
	c := r1cstest.NewCubic(3)
	f := setup(t, c)
	proof, pub := prove(t, f, c, rand.Reader)
	pub[0].SetUint64(36)
	assert.ErrorIs(t, groth16.Verify(f.vk, proof, pub), groth16.ErrInvalidProof)
	assert.Error(t, groth16.Verify(f.vk, proof, nil), "wrong number of inputs")
}

func TestTamperedProofFails(t *testing.T) {
	c := &r1cstest.MulChain{N: 9, Seed: fr.NewElement(3)}
	f := setup(t, c)
	proof, pub := prove(t, f, c, rand.Reader)
	tampers := map[string]func(p *groth16.Proof){
		"A doubled": func(p *groth16.Proof) { p.A.Double(&p.A) },
		"B negated": func(p *groth16.Proof) { p.B.Neg(&p.B) },
		"C swapped": func(p *groth16.Proof) { p.C = p.A },
	}
	for name, tamper := range tampers {
		t.Run(name, func(t *testing.T) {
			p := *proof
			tamper(&p)
			assert.ErrorIs(t, groth16.Verify(f.vk, &p, pub), groth16.ErrInvalidProof)
		})
	}
}

func TestProofFromOtherKeyFails(t *testing.T) {
	c := r1cstest.NewCubic(3)
	f := setup(t, c)
	proof, pub := prove(t, f, c, rand.Reader)
	_, otherVK, err := groth16.Setup(f.sys, seeded(2))
	require.NoError(t, err)
	assert.ErrorIs(t, groth16.Verify(otherVK, proof, pub), groth16.ErrInvalidProof)
}

func TestFixedRandomnessIsDeterministic(t *testing.T) {
	c := &r1cstest.MulChain{N: 20, Seed: fr.NewElement(9)}
	f := setup(t, c)
	p1, _ := prove(t, f, c, seeded(7))
	p2, _ := prove(t, f, c, seeded(7))
	p3, _ := prove(t, f, c, seeded(8))
	b1, b2, b3 := encode(t, p1), encode(t, p2), encode(t, p3)
	assert.Equal(t, b1, b2)
	assert.NotEqual(t, b1, b3)
}

func encode(t testing.TB, p *groth16.Proof) []byte {
	var buf bytes.Buffer
	_, err := p.WriteTo(&buf)
	require.NoError(t, err)
	return buf.Bytes()
}

func TestProveRejectsForeignAssignment(t *testing.T) {
	f := setup(t, r1cstest.NewCubic(3))
	asg, err := r1cs.Solve(&r1cstest.MulChain{N: 3, Seed: fr.NewElement(1)})
	require.NoError(t, err)
	be, err := cpu.New()
	require.NoError(t, err)
	_, err = groth16.Prove(context.Background(), f.pk, asg, be, rand.Reader)
	assert.ErrorIs(t, err, groth16.ErrKeyMismatch)
}

func TestShortRandomness(t *testing.T) {
	c := r1cstest.NewCubic(3)
	f := setup(t, c)
	asg, err := r1cs.Solve(c)
	require.NoError(t, err)
	be, err := cpu.New()
	require.NoError(t, err)
	_, err = groth16.Prove(context.Background(), f.pk, asg, be, bytes.NewReader(bytes.Repeat([]byte{1}, 70)))
	assert.ErrorContains(t, err, "draw s")
	_, _, err = groth16.Setup(f.sys, bytes.NewReader(nil))
	assert.Error(t, err)
}

// TestKeyLayoutsGiveSameProof covers both L‖H paths: keys from Setup and
// ReadFrom (one MSM) and a key whose L and H live apart (two MSMs).
func TestKeyLayoutsGiveSameProof(t *testing.T) {
	c := &r1cstest.MulChain{N: 40, Seed: fr.NewElement(6)}
	f := setup(t, c)
	var buf bytes.Buffer
	_, err := f.pk.WriteTo(&buf)
	require.NoError(t, err)
	var decoded groth16.ProvingKey
	_, err = decoded.ReadFrom(&buf)
	require.NoError(t, err)
	apart := *f.pk
	apart.G1.L = append([]bls12381.G1Affine(nil), f.pk.G1.L...)
	apart.G1.H = append([]bls12381.G1Affine(nil), f.pk.G1.H...)

	var want []byte
	for name, pk := range map[string]*groth16.ProvingKey{"setup": f.pk, "decoded": &decoded, "apart": &apart} {
		asg, err := r1cs.Solve(c, r1cs.WithShape(f.sys))
		require.NoError(t, err)
		be, err := cpu.New()
		require.NoError(t, err)
		proof, err := groth16.Prove(context.Background(), pk, asg, be, seeded(5))
		require.NoError(t, err, name)
		require.NoError(t, groth16.Verify(f.vk, proof, asg.PublicInputs()), name)
		if want == nil {
			want = encode(t, proof)
		}
		assert.Equal(t, want, encode(t, proof), name)
	}
}

// Prove reports each backend call and itself to the trace in its context,
// as host phases that nest as the call order says.
func TestProveTrace(t *testing.T) {
	c := &r1cstest.MulChain{N: 300, Seed: fr.NewElement(2)}
	f := setup(t, c)
	asg, err := r1cs.Solve(c, r1cs.WithShape(f.sys))
	require.NoError(t, err)
	be, err := cpu.New()
	require.NoError(t, err)
	var pt groth16.PhaseTimes
	proof, err := groth16.Prove(groth16.WithTrace(context.Background(), pt.Trace()), f.pk, asg, be, rand.Reader)
	require.NoError(t, err)
	require.NoError(t, groth16.Verify(f.vk, proof, asg.PublicInputs()))
	infos := pt.Infos()
	require.Len(t, infos, 7, "%v", infos)
	byPhase := map[groth16.Phase]groth16.PhaseInfo{}
	for _, i := range infos {
		assert.NotContains(t, byPhase, i.Phase, "one report per phase")
		byPhase[i.Phase] = i
		assert.Empty(t, i.Device, "%s: a host phase", i.Phase)
		assert.Empty(t, i.Call, "%s: a phase of Prove's own", i.Phase)
		assert.Positive(t, i.Duration, i.Phase)
	}
	total := byPhase[groth16.PhaseProve]
	assert.Equal(t, groth16.PhaseProve, infos[len(infos)-1].Phase, "the whole proof last")
	assert.Equal(t, groth16.PhaseHost, infos[0].Phase, "the host vectors first")
	assert.Equal(t, groth16.PhaseQuotient, infos[1].Phase, "then the quotient")
	assert.Equal(t, f.pk.NbVariables(), byPhase[groth16.PhaseHost].Points)
	assert.False(t, byPhase[groth16.PhaseQuotient].Start.Before(byPhase[groth16.PhaseHost].Start.Add(byPhase[groth16.PhaseHost].Duration)),
		"the quotient starts after the host vectors")
	assert.Equal(t, f.pk.DomainSize, byPhase[groth16.PhaseQuotient].Points)
	assert.Equal(t, len(f.pk.G1.L)+len(f.pk.G1.H), byPhase[groth16.PhaseMSMLH].Points)
	assert.Equal(t, len(f.pk.G2.B), byPhase[groth16.PhaseMSMB2].Points)
	end := func(i groth16.PhaseInfo) time.Time { return i.Start.Add(i.Duration) }
	q := byPhase[groth16.PhaseQuotient]
	for _, ph := range []groth16.Phase{groth16.PhaseMSMA, groth16.PhaseMSMB1, groth16.PhaseMSMLH} {
		assert.False(t, byPhase[ph].Start.Before(end(q)), "%s starts after the quotient", ph)
		assert.False(t, byPhase[groth16.PhaseMSMB2].Start.Before(end(byPhase[ph])), "B2 starts after %s", ph)
	}
	for ph, i := range byPhase {
		assert.False(t, i.Start.Before(total.Start), ph)
		assert.False(t, end(i).After(end(total)), ph)
	}
	d := pt.Durations()
	assert.Equal(t, total.Duration, d[groth16.PhaseProve])
	pt.Reset()
	assert.Empty(t, pt.Infos())
	assert.Nil(t, groth16.ContextTrace(context.Background()))
	assert.Equal(t, context.Background(), groth16.WithTrace(context.Background(), nil), "a nil trace adds nothing")
}

// TestWithTraceComposes: a trace installed over another runs first, and
// the earlier one still receives every phase, once; a trace without a
// hook leaves the earlier one in place.
func TestWithTraceComposes(t *testing.T) {
	c := &r1cstest.MulChain{N: 50, Seed: fr.NewElement(8)}
	f := setup(t, c)
	be, err := cpu.New()
	require.NoError(t, err)
	var outer, inner groth16.PhaseTimes
	var order []string
	var mu sync.Mutex
	ctx := groth16.WithTrace(context.Background(), &groth16.Trace{PhaseDone: func(i groth16.PhaseInfo) {
		outer.Trace().PhaseDone(i)
		if i.Phase == groth16.PhaseProve {
			mu.Lock()
			order = append(order, "outer")
			mu.Unlock()
		}
	}})
	ctx = groth16.WithTrace(ctx, &groth16.Trace{})
	ctx = groth16.WithTrace(ctx, &groth16.Trace{PhaseDone: func(i groth16.PhaseInfo) {
		inner.Trace().PhaseDone(i)
		if i.Phase == groth16.PhaseProve {
			mu.Lock()
			order = append(order, "inner")
			mu.Unlock()
		}
	}})
	asg, err := r1cs.Solve(c, r1cs.WithShape(f.sys))
	require.NoError(t, err)
	_, err = groth16.Prove(ctx, f.pk, asg, be, seeded(4))
	require.NoError(t, err)
	require.NotEmpty(t, inner.Infos())
	assert.ElementsMatch(t, inner.Infos(), outer.Infos(), "both traces see every phase, once")
	assert.Equal(t, []string{"inner", "outer"}, order, "the trace installed last runs first")
}

// Two overlapping Proves with different traces each get only their own
// phases, the backend's sub-phases included.
func TestProveTracesOverlap(t *testing.T) {
	c := &r1cstest.MulChain{N: 200, Seed: fr.NewElement(6)}
	f := setup(t, c)
	inner, err := cpu.New()
	require.NoError(t, err)
	be := &subPhases{Backend: inner, started: make(chan struct{}, 2), release: make(chan struct{})}
	var traces [2]groth16.PhaseTimes
	errs := make(chan error, 2)
	for i := range traces {
		asg, err := r1cs.Solve(c, r1cs.WithShape(f.sys))
		require.NoError(t, err)
		ctx := groth16.WithTrace(context.Background(), traces[i].Trace())
		go func() {
			_, err := groth16.Prove(ctx, f.pk, asg, be, seeded(uint64(i)))
			errs <- err
		}()
	}
	<-be.started // both quotients are running when either ends
	<-be.started
	close(be.release)
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	for i := range traces {
		infos := traces[i].Infos()
		require.Len(t, infos, 7+5, "trace %d: Prove's seven phases and one sub-phase per backend call", i)
		for _, info := range infos {
			if info.Device == "" {
				continue
			}
			assert.Equal(t, groth16.Phase("sub "+string(info.Call)), info.Phase, "trace %d", i)
		}
		d := traces[i].Durations()
		assert.Equal(t, time.Duration(1), d[groth16.Phase("sub "+string(groth16.PhaseQuotient))], "trace %d: one quotient", i)
	}
}

// subPhases is the CPU backend reporting one sub-phase per call, named
// after the call's Prove phase, with a quotient that waits for release.
type subPhases struct {
	*cpu.Backend
	started, release chan struct{}
}

func (b *subPhases) report(ctx context.Context) {
	groth16.PhaseDone(ctx, groth16.PhaseInfo{Phase: groth16.Phase("sub " + string(groth16.ContextCall(ctx))),
		Duration: 1, Device: "test"})
}

func (b *subPhases) QuotientH(ctx context.Context, a, bv, c []fr.Element) ([]fr.Element, error) {
	b.started <- struct{}{}
	<-b.release
	b.report(ctx)
	return b.Backend.QuotientH(ctx, a, bv, c)
}

func (b *subPhases) MSMG1(ctx context.Context, bases []bls12381.G1Affine, s []fr.Element) (bls12381.G1Jac, error) {
	b.report(ctx)
	return b.Backend.MSMG1(ctx, bases, s)
}

func (b *subPhases) MSMG2(ctx context.Context, bases []bls12381.G2Affine, s []fr.Element) (bls12381.G2Jac, error) {
	b.report(ctx)
	return b.Backend.MSMG2(ctx, bases, s)
}

func BenchmarkProve(b *testing.B) {
	for _, logN := range []int{10, 14, 16, 18, 20} {
		b.Run(fmt.Sprintf("2^%d", logN), func(b *testing.B) {
			c := &r1cstest.MulChain{N: 1<<logN - 4, Seed: fr.NewElement(3)}
			f := setup(b, c) // before b.Loop, so untimed
			be, err := cpu.New()
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				asg, err := r1cs.Solve(c, r1cs.WithShape(f.sys))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := groth16.Prove(context.Background(), f.pk, asg, be, rand.Reader); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/proof")
		})
	}
}

// shortQuotient is a faulty backend whose quotient is too short.
type shortQuotient struct{ *cpu.Backend }

func (b shortQuotient) QuotientH(ctx context.Context, a, bv, c []fr.Element) ([]fr.Element, error) {
	h, err := b.Backend.QuotientH(ctx, a, bv, c)
	return h[:len(h)/2], err
}

func TestProveRejectsBadBackendOutput(t *testing.T) {
	c := r1cstest.NewCubic(3)
	f := setup(t, c)
	asg, err := r1cs.Solve(c)
	require.NoError(t, err)
	be, err := cpu.New()
	require.NoError(t, err)
	_, err = groth16.Prove(context.Background(), f.pk, asg, shortQuotient{be}, rand.Reader)
	assert.ErrorContains(t, err, "quotient has 4 coefficients, want 8")
}

// A Workspace carried from proof to proof, across keys of different sizes,
// gives the proofs Prove gives without one.
func TestWorkspaceReuse(t *testing.T) {
	be, err := cpu.New()
	require.NoError(t, err)
	proveAcrossKeys(t, &r1cstest.MulChain{N: 60, Seed: fr.NewElement(4)}, &r1cstest.MulChain{N: 9, Seed: fr.NewElement(5)},
		&groth16.Workspace{}, be, 20, func(int) {})
	_, err = groth16.Prove(context.Background(), nil, nil, nil, nil, groth16.WithWorkspace(nil))
	assert.ErrorContains(t, err, "nil workspace")
}

// proveAcrossKeys proves big, small, big, small on be with ws, with seeds
// from seed on, and checks that each proof verifies and equals the proof
// Prove gives without a workspace; after(i) runs after proof i.
func proveAcrossKeys(t *testing.T, big, small r1cs.Circuit, ws *groth16.Workspace, be groth16.Backend, seed uint64,
	after func(i int)) {
	t.Helper()
	fb, fs := setup(t, big), setup(t, small)
	for i, tc := range []struct {
		f fixture
		c r1cs.Circuit
	}{{fb, big}, {fs, small}, {fb, big}, {fs, small}} {
		want, _ := prove(t, tc.f, tc.c, seeded(seed+uint64(i)))
		asg, err := r1cs.Solve(tc.c, r1cs.WithShape(tc.f.sys))
		require.NoError(t, err)
		got, err := groth16.Prove(context.Background(), tc.f.pk, asg, be, seeded(seed+uint64(i)), groth16.WithWorkspace(ws))
		require.NoError(t, err, "proof %d", i)
		require.NoError(t, groth16.Verify(tc.f.vk, got, asg.PublicInputs()), "proof %d", i)
		assert.Equal(t, encode(t, want), encode(t, got), "proof %d", i)
		after(i)
	}
}

// heldBackend is the CPU backend with a QuotientH that signals its start and
// waits for release.
type heldBackend struct {
	groth16.Backend
	started, release chan struct{}
}

func (b *heldBackend) QuotientH(ctx context.Context, a, bv, c []fr.Element) ([]fr.Element, error) {
	close(b.started)
	<-b.release
	return b.Backend.QuotientH(ctx, a, bv, c)
}

// A Workspace in use makes a second Prove fail at once, and the first one
// still completes.
func TestWorkspaceBusy(t *testing.T) {
	c := &r1cstest.MulChain{N: 12, Seed: fr.NewElement(3)}
	f := setup(t, c)
	cpuBe, err := cpu.New()
	require.NoError(t, err)
	held := &heldBackend{Backend: cpuBe, started: make(chan struct{}), release: make(chan struct{})}
	ws := &groth16.Workspace{}
	solve := func() *r1cs.Assignment {
		asg, err := r1cs.Solve(c, r1cs.WithShape(f.sys))
		require.NoError(t, err)
		return asg
	}
	first := solve()
	done := make(chan error, 1)
	go func() {
		proof, err := groth16.Prove(context.Background(), f.pk, first, held, seeded(2), groth16.WithWorkspace(ws))
		if err == nil {
			err = groth16.Verify(f.vk, proof, first.PublicInputs())
		}
		done <- err
	}()
	<-held.started
	_, err = groth16.Prove(context.Background(), f.pk, solve(), cpuBe, seeded(3), groth16.WithWorkspace(ws))
	assert.ErrorIs(t, err, groth16.ErrWorkspaceBusy)
	close(held.release)
	require.NoError(t, <-done)
}

// A backend's record of its work reaches the trace in Prove's context as
// the Detail of its last sub-phase, under the call that did it, and adds
// no phase: the per-phase sums are those of the sub-phases' durations.
func TestProveTraceDetail(t *testing.T) {
	c := &r1cstest.MulChain{N: 200, Seed: fr.NewElement(8)}
	f := setup(t, c)
	inner, err := cpu.New()
	require.NoError(t, err)
	asg, err := r1cs.Solve(c, r1cs.WithShape(f.sys))
	require.NoError(t, err)
	var pt groth16.PhaseTimes
	_, err = groth16.Prove(groth16.WithTrace(context.Background(), pt.Trace()), f.pk, asg, detailed{inner}, seeded(3))
	require.NoError(t, err)
	var records []callRecord
	for _, i := range pt.Infos() {
		switch i.Phase {
		case "stage two":
			require.IsType(t, callRecord{}, i.Detail)
			r := i.Detail.(callRecord)
			assert.Equal(t, i.Call, r.call, "the record names the call it came from")
			records = append(records, r)
		default:
			assert.Nil(t, i.Detail, "%s: no record", i.Phase)
		}
	}
	assert.ElementsMatch(t, []callRecord{{groth16.PhaseQuotient, 11}, {groth16.PhaseMSMLH, 11}, {groth16.PhaseMSMA, 11},
		{groth16.PhaseMSMB1, 11}, {groth16.PhaseMSMB2, 11}}, records, "one record per backend call")
	d := pt.Durations()
	assert.Len(t, d, 7+2, "Prove's seven phases and the two sub-phases")
	assert.Equal(t, 5*time.Duration(1), d["stage one"])
	assert.Equal(t, 5*time.Duration(2), d["stage two"], "a record counts once, as its sub-phase")
}

// callRecord is a backend's own record of a call.
type callRecord struct {
	call groth16.Phase
	size int
}

// detailed is the CPU backend reporting two sub-phases per call, the last
// with its record of the call.
type detailed struct{ *cpu.Backend }

func (detailed) report(ctx context.Context) {
	groth16.PhaseDone(ctx, groth16.PhaseInfo{Phase: "stage one", Duration: 1, Device: "test"})
	groth16.PhaseDone(ctx, groth16.PhaseInfo{Phase: "stage two", Duration: 2, Device: "test",
		Detail: callRecord{call: groth16.ContextCall(ctx), size: 11}})
}

func (b detailed) QuotientH(ctx context.Context, a, bv, c []fr.Element) ([]fr.Element, error) {
	b.report(ctx)
	return b.Backend.QuotientH(ctx, a, bv, c)
}

func (b detailed) MSMG1(ctx context.Context, bases []bls12381.G1Affine, s []fr.Element) (bls12381.G1Jac, error) {
	b.report(ctx)
	return b.Backend.MSMG1(ctx, bases, s)
}

func (b detailed) MSMG2(ctx context.Context, bases []bls12381.G2Affine, s []fr.Element) (bls12381.G2Jac, error) {
	b.report(ctx)
	return b.Backend.MSMG2(ctx, bases, s)
}
