package engine

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/prover/gpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// gatedSetup is a development setup's FixedBaser that holds every key
// load at its first fixed-base product until opened, and fails the first
// fails loads: a key loader the test drives.
type gatedSetup struct {
	entered chan struct{} // closed when a load reaches the gate
	once    sync.Once
	open    chan struct{}
	fails   atomic.Int32
	// minPoints gates only the products of at least this many points (0:
	// every one), so that a small key loads while a large one is held.
	minPoints int
}

func newGatedSetup() *gatedSetup {
	return &gatedSetup{entered: make(chan struct{}), open: make(chan struct{})}
}

var errInjectedSetup = errors.New("injected setup fault")

func (g *gatedSetup) pass(ctx context.Context, points int) error {
	if points < g.minPoints {
		return nil
	}
	g.once.Do(func() { close(g.entered) })
	select {
	case <-g.open:
	case <-ctx.Done():
		return ctx.Err()
	}
	if g.fails.Add(-1) >= 0 {
		return errInjectedSetup
	}
	return nil
}

func (g *gatedSetup) FixedBaseG1(ctx context.Context, base *bls12381.G1Affine, s []fr.Element) ([]bls12381.G1Affine, error) {
	if err := g.pass(ctx, len(s)); err != nil {
		return nil, err
	}
	return groth16.CPUFixedBase{}.FixedBaseG1(ctx, base, s)
}

func (g *gatedSetup) FixedBaseG2(ctx context.Context, base *bls12381.G2Affine, s []fr.Element) ([]bls12381.G2Affine, error) {
	if err := g.pass(ctx, len(s)); err != nil {
		return nil, err
	}
	return groth16.CPUFixedBase{}.FixedBaseG2(ctx, base, s)
}

func gatedEngine(t *testing.T, g *gatedSetup) (*Engine, *keys.Manager) {
	km, err := keys.New(keys.Config{Dir: t.TempDir(), DevSeed: 1, FixedBase: g, DevKeysInMemory: true})
	require.NoError(t, err)
	return newEngine(t, Config{Keys: km, Synthesizers: 1}, newFake(t, "fake0")), km
}

// TestSynthesisRunsWhileTheKeyLoads: the first partition of a job is
// solved while its key's load is held at the gate (no key yet), and the
// job proves once the gate opens.
func TestSynthesisRunsWhileTheKeyLoads(t *testing.T) {
	g := newGatedSetup()
	e, km := gatedEngine(t, g)
	c := porep(t, 1024)
	j, _, err := e.Submit(Request{Circuit: c, Input: partitionInput(1, 2), Partitions: 2})
	require.NoError(t, err)

	errSeen := errors.New("first partition solved")
	var before []EventKind
	err = j.Watch(context.Background(), func(ev Event) error {
		if ev.Kind == EventSynthesisDone && ev.Partition == 0 {
			return errSeen
		}
		before = append(before, ev.Kind)
		return nil
	})
	require.ErrorIs(t, err, errSeen)
	assert.NotContains(t, before, EventKeyReady, "the key was not ready when the first partition was solved")
	tier := km.Get(c.Key).Tier
	assert.NotEqual(t, keys.Warm, tier, "the key is still loading")
	assert.NotEqual(t, keys.Hot, tier, "the key is still loading")
	<-g.entered // the load is in the setup, held
	close(g.open)

	r, err := wait(t, j)
	require.NoError(t, err)
	require.Len(t, r.Partitions, 2)
	for _, p := range r.Partitions {
		assert.True(t, p.Verified)
	}
	assert.Positive(t, r.Timings.KeyLoad, "the first partition's reference loaded the key")
}

// TestKeyLoadFailureFailsTheJobAndTheEngineServes: a load failing beside
// the synthesis fails the job with the key's error, and the next job of
// the same key loads it again and proves.
func TestKeyLoadFailureFailsTheJobAndTheEngineServes(t *testing.T) {
	g := newGatedSetup()
	g.fails.Store(1)
	e, _ := gatedEngine(t, g)
	c := porep(t, 1024)
	j := submit(t, e, c, 1, Normal)
	close(g.open)
	_, err := wait(t, j)
	require.Error(t, err)
	assert.ErrorIs(t, err, errInjectedSetup)
	assert.Contains(t, err.Error(), "key "+c.Key)
	assert.Equal(t, Failed, j.State())

	r, err := wait(t, submit(t, e, c, 2, Normal))
	require.NoError(t, err, "the engine serves the next job")
	assert.True(t, r.Verified)
}

// uploadingFake is a resident fake device that records the keys made
// resident by Preload.
type uploadingFake struct {
	residentFake
	preloaded chan *groth16.ProvingKey
}

func (d uploadingFake) Preload(_ context.Context, pk *groth16.ProvingKey) error {
	d.preloaded <- pk
	return nil
}

// TestKeyUploadedBesideTheSynthesis: on a daemon with one resident device
// the key goes to the device as soon as it is loaded, before the job's
// proof, which then finds it hot.
func TestKeyUploadedBesideTheSynthesis(t *testing.T) {
	g := newGatedSetup()
	km, err := keys.New(keys.Config{Dir: t.TempDir(), DevSeed: 1, FixedBase: g, DevKeysInMemory: true})
	require.NoError(t, err)
	d := uploadingFake{residentFake{newFake(t, "gpu0")}, make(chan *groth16.ProvingKey, 4)}
	e := newEngine(t, Config{Keys: km, Synthesizers: 1}, d)
	c := porep(t, 1024)
	j := submit(t, e, c, 1, Normal)
	errSeen := errors.New("solved")
	require.ErrorIs(t, j.Watch(context.Background(), func(ev Event) error {
		if ev.Kind == EventSynthesisDone {
			return errSeen
		}
		return nil
	}), errSeen)
	assert.Empty(t, d.preloaded, "nothing to upload before the key is loaded")
	close(g.open)
	r, err := wait(t, j)
	require.NoError(t, err)
	assert.True(t, r.Verified)
	require.Len(t, d.preloaded, 1, "one upload, beside the synthesis; the proof found the key hot")
	assert.True(t, km.IsHotOn(c.Key, "gpu0"))
}

// TestDeviceProvesOtherKeysWhileAKeyLoads: a solved job whose key still
// loads waits in the hand-off, not on the device: a later job of a key
// already there, even one of a lower priority, proves meanwhile, and the
// first job proves once its key is loaded.
func TestDeviceProvesOtherKeysWhileAKeyLoads(t *testing.T) {
	small, large := porep(t, 1024), porep(t, 4096)
	g := newGatedSetup()
	g.minPoints = 10000 // more than the small key's G1 product (about 4 points a constraint), fewer than the large key's
	km, err := keys.New(keys.Config{Dir: t.TempDir(), DevSeed: 1, FixedBase: g, DevKeysInMemory: true})
	require.NoError(t, err)
	e := newEngine(t, Config{Keys: km, Synthesizers: 2}, newFake(t, "fake0"))
	t.Cleanup(func() {
		select {
		case <-g.open:
		default:
			close(g.open)
		}
	})
	r, err := wait(t, submit(t, e, small, 1, Normal)) // the small key is loaded
	require.NoError(t, err)
	require.True(t, r.Verified)

	held := submit(t, e, large, 2, High)
	errSeen := errors.New("solved")
	require.ErrorIs(t, held.Watch(context.Background(), func(ev Event) error {
		if ev.Kind == EventSynthesisDone {
			return errSeen
		}
		return nil
	}), errSeen)
	<-g.entered // the large key's load is held at the gate, its job solved

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err = submit(t, e, small, 3, Low).Wait(ctx)
	require.NoError(t, err, "a job of a loaded key proves while another key loads")
	assert.True(t, r.Verified)
	assert.Equal(t, Ready, held.State(), "the held job waits in the hand-off, not on the device")

	close(g.open)
	r, err = wait(t, held)
	require.NoError(t, err)
	assert.True(t, r.Verified)
}

// TestOverlapKeyCountsTheSetupAndTheJobBudget: a development key loads
// beside the synthesis only where its load's peak (key, compile, setup
// scalars) and the job budget's vectors fit HostTotal together. The rule
// before counted the key, its compile and one partition's vectors, which
// let a development setup's scalars and the other slots' vectors pass the
// host (a porep-c2 2^27 setup: 46 + 27 + 30 GiB beside 48 GiB of vectors).
func TestOverlapKeyCountsTheSetupAndTheJobBudget(t *testing.T) {
	c := porep(t, 1<<12)
	e := newEngine(t, Config{}, newFake(t, "fake0"))
	sh, err := e.cfg.Keys.Shape(context.Background(), c)
	require.NoError(t, err)
	j := &Job{Req: Request{Circuit: c, Partitions: 3}}
	assert.True(t, e.overlapKey(j, sh), "no host bound")

	load := e.cfg.Keys.LoadBytes(c, sh)
	require.Equal(t, sh.KeyBytes()+sh.CompileBytes()+sh.SetupBytes(), load)
	e.cfg.HostBudget = 2 * sh.VectorBytes()
	e.cfg.HostTotal = load + e.cfg.HostBudget
	assert.True(t, e.overlapKey(j, sh), "the load and the job budget fit")
	e.cfg.HostTotal--
	assert.False(t, e.overlapKey(j, sh), "one byte short")
	e.cfg.HostTotal = sh.KeyBytes() + sh.CompileBytes() + sh.VectorBytes()
	assert.False(t, e.overlapKey(j, sh), "the rule before would have let it overlap")

	e.cfg.HostBudget = 0 // no job budget: all of the job's partitions
	e.cfg.HostTotal = load + 3*sh.VectorBytes()
	assert.True(t, e.overlapKey(j, sh))
	e.cfg.HostTotal--
	assert.False(t, e.overlapKey(j, sh))
}

// planningFake is a resident fake device that plans each key it preloads,
// as a GPU does (gpu.Backend.PlanKey): here half of each key streamed.
type planningFake struct {
	residentFake
	whole bool // plan every key whole instead
	mu    sync.Mutex
	plans map[*groth16.ProvingKey]gpu.KeyPlan
}

func (d *planningFake) Preload(_ context.Context, pk *groth16.ProvingKey) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.plans[pk] = gpu.KeyPlan{Budget: 3 << 30, Quotient: 1 << 30, Arena: 1 << 29, Stream: 1 << 28, Sets: []gpu.SetPlan{
		{Curve: "g1", Points: 1000, Bytes: 96_000, Resident: true, Chunk: 1000},
		{Curve: "g2", Points: 1000, Bytes: 192_000, Resident: d.whole, Chunk: 500}}}
	return nil
}

func (d *planningFake) KeyPlan(pk *groth16.ProvingKey) (KeyPlan, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.plans[pk]
	if !ok {
		return nil, false
	}
	return p, true
}

// TestStatusShowsHowAKeyUsesTheDevice: a preloaded key's plan on its
// device appears in Status (resident and streamed bytes, the peak, the plan
// in words) while the key is hot there, and goes when the key is evicted.
func TestStatusShowsHowAKeyUsesTheDevice(t *testing.T) {
	km, err := keys.New(keys.Config{Dir: t.TempDir(), DevSeed: 1, DevKeysInMemory: true})
	require.NoError(t, err)
	d := &planningFake{residentFake: residentFake{newFake(t, "gpu0")}, plans: map[*groth16.ProvingKey]gpu.KeyPlan{}}
	e := newEngine(t, Config{Keys: km, Synthesizers: 1}, d)
	c := porep(t, 1024)
	require.NoError(t, e.Preload(context.Background(), c, true))
	st := e.Status()
	require.Len(t, st.Devices, 1)
	require.Len(t, st.Devices[0].Keys, 1, "the preloaded key's placement")
	p := st.Devices[0].Keys[0]
	assert.Equal(t, c.Key, p.Key)
	assert.Equal(t, int64(96_000), p.ResidentBytes)
	assert.Equal(t, int64(192_000), p.StreamedBytes)
	assert.Equal(t, int64(96_000)+1<<30+1<<29+1<<28, p.PeakBytes)
	assert.Contains(t, p.Plan, "1 of 2 bases sets resident")
	assert.Contains(t, p.Plan, "g2 1000 points streamed in chunks of 500")
	_, err = km.EvictKey(c.Key, keys.Warm)
	require.NoError(t, err)
	assert.Empty(t, e.Status().Devices[0].Keys, "an evicted key no longer shows")
}

// TestStreamedKeyKeepsItsHostCopy: with the host copy given back once a GPU
// holds the key (ReleaseHostCopy), a key the GPU streams in part from host
// memory keeps its host copy, and a key it holds whole gives it back.
func TestStreamedKeyKeepsItsHostCopy(t *testing.T) {
	for _, whole := range []bool{false, true} {
		km, err := keys.New(keys.Config{Dir: t.TempDir(), DevSeed: 1, DevKeysInMemory: true, ReleaseHostCopy: true})
		require.NoError(t, err)
		d := &planningFake{residentFake: residentFake{newFake(t, "gpu0")}, whole: whole, plans: map[*groth16.ProvingKey]gpu.KeyPlan{}}
		e := newEngine(t, Config{Keys: km, Synthesizers: 1}, d)
		c := porep(t, 1024)
		require.NoError(t, e.Preload(context.Background(), c, false))
		before := km.List()[0].HostBytes
		require.NoError(t, e.Preload(context.Background(), c, true))
		after := km.List()[0]
		assert.True(t, km.IsHotOn(c.Key, "gpu0"))
		if whole {
			assert.Less(t, after.HostBytes, before, "held whole: the host copy goes")
		} else {
			assert.Equal(t, before, after.HostBytes, "streamed: the host copy stays")
		}
	}
}

// TestSynthesisWorkersShareTheCores: by default a solve runs on the cores
// shared among the solves running (itself included), half of that while a
// device streams its key, and never on fewer than one goroutine.
func TestSynthesisWorkersShareTheCores(t *testing.T) {
	for _, c := range []struct {
		cores, solving int
		streamed       bool
		want           int
	}{
		{16, 1, false, 16}, {16, 1, true, 8}, {16, 2, false, 8}, {16, 2, true, 4},
		{16, 16, false, 1}, {16, 16, true, 1}, {16, 40, false, 1}, {2, 1, true, 1},
		{1, 1, false, 1}, {1, 1, true, 1}, {16, 0, false, 16}, {12, 5, false, 2},
	} {
		assert.Equal(t, c.want, synthesisWorkers(c.cores, c.solving, c.streamed), "%d cores, %d solving, streamed %v", c.cores, c.solving, c.streamed)
	}
}

// TestStreamedKeySolvesOnHalfTheCores: a job whose key a device streams in
// part solves on half the cores, one whose key the device holds whole on
// all of them, and an operator's synthesis_workers is kept either way; the
// Result says how many goroutines the solve ran on.
func TestStreamedKeySolvesOnHalfTheCores(t *testing.T) {
	cores := runtime.NumCPU()
	for _, c := range []struct {
		whole      bool
		configured int
		want       int
	}{
		{whole: true, want: cores},
		{whole: false, want: max(1, cores/2)},
		{whole: false, configured: 3, want: 3},
		{whole: true, configured: 3, want: 3},
	} {
		km, err := keys.New(keys.Config{Dir: t.TempDir(), DevSeed: 1, DevKeysInMemory: true})
		require.NoError(t, err)
		d := &planningFake{residentFake: residentFake{newFake(t, "gpu0")}, whole: c.whole, plans: map[*groth16.ProvingKey]gpu.KeyPlan{}}
		var logs lockedLog
		e := newEngine(t, Config{Keys: km, Synthesizers: 1, SynthesisWorkers: c.configured, Log: slog.New(slog.NewTextHandler(&logs, nil))}, d)
		circ := porep(t, 1024)
		require.NoError(t, e.Preload(context.Background(), circ, true))
		assert.Equal(t, !c.whole, e.streamsKey(circ.Key))
		said := strings.Contains(logs.String(), "its solves leave half the cores")
		assert.Equal(t, !c.whole && c.configured == 0, said, "the log says so where the default halves the solve")
		res, err := wait(t, submit(t, e, circ, 7, Normal))
		require.NoError(t, err)
		assert.True(t, res.Verified)
		assert.Equal(t, c.want, res.Timings.SynthesisWorkers, "whole %v, synthesis_workers %d", c.whole, c.configured)
	}
}

// TestSolvesRunningShareTheCores: each solve that starts while others run
// gets the cores divided among them all; once they end, a solve has every
// core again, also with the default of one synthesizer a core (which used
// to give every solve one goroutine, however few ran). A key no device
// holds is not streamed.
func TestSolvesRunningShareTheCores(t *testing.T) {
	cores := runtime.NumCPU()
	e := newEngine(t, Config{}, newFake(t, "fake0"))
	require.Equal(t, cores, e.cfg.Synthesizers, "the default: one synthesizer a core")
	assert.False(t, e.streamsKey("porep-synth/none"))
	assert.Equal(t, cores, e.startSolve("a"))
	assert.Equal(t, max(1, cores/2), e.startSolve("b"))
	assert.Equal(t, max(1, cores/3), e.startSolve("a"))
	e.endSolve()
	e.endSolve()
	e.endSolve()
	assert.Equal(t, cores, e.startSolve("a"))
	e.endSolve()
}
