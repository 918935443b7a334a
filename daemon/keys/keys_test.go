package keys

import (
	"context"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/internal/renameio"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

func shape(t *testing.T, constraints uint64) *registry.Resolved {
	c, err := registry.Default().Resolve("porep-synth", map[string]uint64{"constraints": constraints})
	require.NoError(t, err)
	return c
}

type countingEvictor struct {
	mu  sync.Mutex
	got []*groth16.ProvingKey
}

func (c *countingEvictor) EvictKey(pk *groth16.ProvingKey) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, pk)
	return nil
}

func TestAcquireLoadsOnceAndReportsLoadTime(t *testing.T) {
	m, err := New(Config{Dir: t.TempDir(), DevSeed: 1})
	require.NoError(t, err)
	c := shape(t, 1024)
	var wg sync.WaitGroup
	hs := make([]*Handle, 4)
	for i := range hs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := m.Acquire(context.Background(), c)
			require.NoError(t, err)
			hs[i] = h
		}()
	}
	wg.Wait()
	for _, h := range hs[1:] {
		assert.Same(t, hs[0].PK, h.PK, "concurrent Acquires share one load")
	}
	info := m.Get(c.Key)
	assert.Equal(t, Warm, info.Tier)
	assert.Equal(t, 4, info.Refs)
	assert.True(t, info.Development)
	for _, h := range hs {
		h.Release()
	}
	assert.Zero(t, m.Get(c.Key).Refs)
}

// List may run while a key loads (GetStatus does): the load's key is Cold,
// and not yet said to be a development key, until it is ready. Under -race
// this also checks that List reads nothing the load writes unlocked.
func TestListWhileAKeyLoads(t *testing.T) {
	m, err := New(Config{Dir: t.TempDir(), DevSeed: 1, DevKeysInMemory: true})
	require.NoError(t, err)
	c := shape(t, 1024)
	done := make(chan *Handle)
	go func() {
		h, err := m.Acquire(context.Background(), c)
		assert.NoError(t, err)
		done <- h
	}()
	seen := 0
	for h := (*Handle)(nil); h == nil; {
		select {
		case h = <-done:
			require.NotNil(t, h)
			defer h.Release()
		default:
		}
		for _, in := range m.List() {
			seen++
			if in.Tier == Cold {
				assert.False(t, in.Development, "a loading key is not yet known to be a development key")
			}
		}
	}
	t.Logf("%d listings of the key while it loaded", seen)
	in := m.Get(c.Key)
	assert.Equal(t, Warm, in.Tier)
	assert.True(t, in.Development)
}

func TestHostBudgetEvictsLRUButNeverInUse(t *testing.T) {
	dir := t.TempDir()
	a, b := shape(t, 1024), shape(t, 2048)
	probe, err := New(Config{Dir: dir, DevSeed: 1})
	require.NoError(t, err)
	hb, err := probe.Acquire(context.Background(), b)
	require.NoError(t, err)
	hb.Release()
	bBytes := probe.Get(b.Key).HostBytes
	ha, err := probe.Acquire(context.Background(), a)
	require.NoError(t, err)
	ha.Release()
	aBytes := probe.Get(a.Key).HostBytes

	// A budget for the larger key alone: loading one drops the other.
	waits := make(chan struct{}, 8)
	m, err := New(Config{Dir: dir, DevSeed: 1, HostBudget: max(aBytes, bBytes) + min(aBytes, bBytes)/2,
		Log: slog.New(onMessage{msgWaitsForBudget, waits})})
	require.NoError(t, err)
	h1, err := m.Acquire(context.Background(), a)
	require.NoError(t, err)
	h1.Release()
	h2, err := m.Acquire(context.Background(), b)
	require.NoError(t, err)
	assert.Equal(t, Cold, m.Get(a.Key).Tier, "the unused key was evicted")
	assert.Equal(t, Warm, m.Get(b.Key).Tier)

	// b is in use: loading a must wait, not evict it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-waits // the load of a waits for the budget b holds: its only caller leaves
		cancel()
	}()
	_, err = m.Acquire(ctx, a)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, Warm, m.Get(b.Key).Tier)
	got := make(chan error)
	go func() {
		h, err := m.Acquire(context.Background(), a)
		if err == nil {
			h.Release()
		}
		got <- err
	}()
	<-waits // the new load of a waits for the budget b holds
	h2.Release()
	require.NoError(t, <-got, "released budget lets the waiting load go on")

	_, err = New(Config{Dir: dir, HostBudget: 10})
	require.NoError(t, err)
	small, _ := New(Config{Dir: dir, HostBudget: 10})
	_, err = small.Acquire(context.Background(), a)
	require.ErrorIs(t, err, ErrTooLarge)
}

func TestEvictInUseIsDeferred(t *testing.T) {
	m, err := New(Config{Dir: t.TempDir(), DevSeed: 1})
	require.NoError(t, err)
	ev := &countingEvictor{}
	m.AddDevice("gpu0", ev)
	c := shape(t, 1024)
	h, err := m.Acquire(context.Background(), c)
	require.NoError(t, err)
	m.MarkHot(h, "gpu0")
	assert.Equal(t, Hot, m.Get(c.Key).Tier)
	info, err := m.EvictKey(c.Key, Cold)
	require.NoError(t, err)
	assert.Equal(t, Hot, info.Tier, "in use: still there")
	assert.Equal(t, Cold, info.EvictionDue)
	assert.Empty(t, ev.got)
	h.Release()
	assert.Equal(t, Cold, m.Get(c.Key).Tier)
	assert.Len(t, ev.got, 1, "the GPU copy was freed")

	_, err = m.EvictKey(c.Key, Hot)
	assert.Error(t, err)
}

func TestGPUBudgetEvictsLeastRecentlyUsedOnThatDevice(t *testing.T) {
	m, err := New(Config{Dir: t.TempDir(), DevSeed: 1})
	require.NoError(t, err)
	ev := &countingEvictor{}
	m.AddDevice("gpu0", ev)
	a, b := shape(t, 1024), shape(t, 2048)
	ha, err := m.Acquire(context.Background(), a)
	require.NoError(t, err)
	hb, err := m.Acquire(context.Background(), b)
	require.NoError(t, err)
	m.cfg.GPUBudget = m.Get(b.Key).GPUBytes // room for b alone
	require.NoError(t, m.MakeRoomOn(ha, "gpu0"))
	m.MarkHot(ha, "gpu0")
	m.MarkHot(ha, "gpu1")
	require.NoError(t, m.MakeRoomOn(hb, "gpu0"))
	assert.Equal(t, []*groth16.ProvingKey{ha.PK}, ev.got)
	assert.False(t, m.IsHotOn(a.Key, "gpu0"))
	assert.True(t, m.IsHotOn(a.Key, "gpu1"), "other devices are not disturbed")
	m.cfg.GPUBudget = 1
	assert.Error(t, m.MakeRoomOn(hb, "gpu0"), "a key larger than the GPU budget is refused")
	ha.Release()
	hb.Release()
}

func TestProductionKeyFilesAndDamage(t *testing.T) {
	dir := t.TempDir()
	c := shape(t, 1024)
	dev, err := New(Config{Dir: t.TempDir(), DevSeed: 9})
	require.NoError(t, err)
	h, err := dev.Acquire(context.Background(), c)
	require.NoError(t, err)
	base := filepath.Join(dir, FileName(c.Key))
	require.NoError(t, renameio.WriteFrom(base+".pk", 0o644, func(w io.Writer) error { _, err := h.PK.WriteTo(w); return err }))
	require.NoError(t, renameio.WriteFrom(base+".vk", 0o644, func(w io.Writer) error { _, err := h.VK.WriteTo(w); return err }))
	h.Release()

	m, err := New(Config{Dir: dir, NoGenerate: true})
	require.NoError(t, err)
	hp, err := m.Acquire(context.Background(), c)
	require.NoError(t, err)
	assert.False(t, hp.Dev, "key files in the directory are production keys")
	hp.Release()

	// A damaged production key is an error naming the file, never a crash
	// and never a silent development key.
	b, err := os.ReadFile(base + ".pk")
	require.NoError(t, err)
	b[len(b)/2] ^= 0xff
	require.NoError(t, os.WriteFile(base+".pk", b, 0o644))
	m2, err := New(Config{Dir: dir})
	require.NoError(t, err)
	_, err = m2.Acquire(context.Background(), c)
	require.Error(t, err)
	assert.Contains(t, err.Error(), base+".pk")

	none, err := New(Config{Dir: t.TempDir(), NoGenerate: true})
	require.NoError(t, err)
	_, err = none.Acquire(context.Background(), c)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "development keys are off")
}

func TestDevKeysInMemoryWriteNothing(t *testing.T) {
	dir := t.TempDir()
	m, err := New(Config{Dir: dir, DevSeed: 1, DevKeysInMemory: true})
	require.NoError(t, err)
	c := shape(t, 1024)
	h, err := m.Acquire(context.Background(), c)
	require.NoError(t, err)
	defer h.Release()
	assert.True(t, h.Dev)
	assert.Nil(t, h.Sys.A.Col, "a warm key keeps the counts, not the matrices")
	assert.Equal(t, len(h.PK.G1.H), h.Sys.DomainSize()-1)
	files, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, files, "nothing written to the key directory")

	// The same seed on disk gives the same key: in memory only changes where it lives.
	m2, err := New(Config{Dir: t.TempDir(), DevSeed: 1})
	require.NoError(t, err)
	h2, err := m2.Acquire(context.Background(), c)
	require.NoError(t, err)
	defer h2.Release()
	assert.Equal(t, h.VK, h2.VK)
}

func TestDevFilesFitReadsTheFreeSpace(t *testing.T) {
	sys := &r1cs.System{NbPublic: 2, NbPrivate: 1 << 20, NbConstraints: 1 << 20}
	need, free, ok := devFilesFit(t.TempDir(), sys)
	assert.Equal(t, keyfile.FileSize(EstimateSize(sys)), need, "the raw key file alone")
	if free == 0 {
		t.Skip("free space unknown on this system: keys are assumed to fit")
	}
	assert.Equal(t, need <= free, ok)
	huge := &r1cs.System{NbPublic: 2, NbPrivate: 1 << 40, NbConstraints: 1 << 40}
	_, _, ok = devFilesFit(t.TempDir(), huge)
	assert.False(t, ok, "2^40 wires of key points fit no disk here")
}

func TestFitsRefusesKeysOverTheBudget(t *testing.T) {
	sys := &r1cs.System{NbPublic: 2, NbPrivate: 1 << 20, NbConstraints: 1 << 20}
	m, err := New(Config{Dir: t.TempDir(), HostBudget: 1 << 20})
	require.NoError(t, err)
	err = m.Fits(sys)
	require.ErrorIs(t, err, ErrTooLarge)
	assert.Contains(t, err.Error(), "budget 1048576")
	unbounded, err := New(Config{Dir: t.TempDir()})
	require.NoError(t, err)
	assert.NoError(t, unbounded.Fits(sys))
}

func TestReleaseHostCopyOnOneGPU(t *testing.T) {
	m, err := New(Config{Dir: t.TempDir(), DevSeed: 1, DevKeysInMemory: true, ReleaseHostCopy: true})
	require.NoError(t, err)
	ev := &countingEvictor{}
	m.AddDevice("gpu0", ev)
	c := shape(t, 4096)
	h, err := m.Acquire(context.Background(), c)
	require.NoError(t, err)
	first := h.PK.G1.A[0]
	mid := len(h.PK.G1.A) / 2
	require.False(t, h.PK.G1.A[mid].IsInfinity(), "a real point before the release")
	ic := append([]bls12381.G1Affine(nil), h.VK.G1.IC...)
	before := m.Get(c.Key).HostBytes

	m.MarkHot(h, "gpu0")
	info := m.Get(c.Key)
	assert.Equal(t, Hot, info.Tier)
	assert.Less(t, info.HostBytes, before/2, "the points' pages went back")
	assert.Equal(t, first, h.PK.G1.A[0], "each bases set keeps its first point (the GPU checks it)")
	assert.True(t, h.PK.G1.A[mid].IsInfinity(), "the inside reads zeros: (0,0), infinity")
	assert.Equal(t, ic, h.VK.G1.IC, "the verifying key, in the same array, is untouched")
	require.NoError(t, m.MakeRoomOn(h, "gpu0"), "provable on its GPU")
	assert.ErrorIs(t, m.MakeRoomOn(h, "gpu1"), ErrKeyGone, "nowhere else")

	// The GPU recovers: the only copy is gone; the holder fails cleanly and
	// the next Acquire loads the key again.
	m.ForgetDevice("gpu0")
	assert.ErrorIs(t, m.MakeRoomOn(h, "gpu0"), ErrKeyGone)
	assert.Equal(t, Cold, m.Get(c.Key).Tier)
	h.Release()
	h2, err := m.Acquire(context.Background(), c)
	require.NoError(t, err)
	defer h2.Release()
	assert.NotSame(t, h.PK, h2.PK)
	assert.False(t, h2.PK.G1.A[mid].IsInfinity(), "loaded again, whole")
	assert.Equal(t, ic, h2.VK.G1.IC)

	// An eviction to warm takes a released key to cold.
	m.MarkHot(h2, "gpu0")
	h2.Release()
	got, err := m.EvictKey(c.Key, Warm)
	require.NoError(t, err)
	assert.Equal(t, Cold, got.Tier)
}

// TestNoReleaseWhileStreamed: a key a GPU streams in part from its host
// copy (MarkHotStreaming, at preload) keeps that copy when the GPU's
// proofs later mark it hot again (MarkHot after each proof); once the GPU
// evicts it, a preload that holds it whole gives the copy back.
func TestNoReleaseWhileStreamed(t *testing.T) {
	m, err := New(Config{Dir: t.TempDir(), DevSeed: 1, DevKeysInMemory: true, ReleaseHostCopy: true})
	require.NoError(t, err)
	m.AddDevice("gpu0", &countingEvictor{})
	c := shape(t, 4096)
	h, err := m.Acquire(context.Background(), c)
	require.NoError(t, err)
	mid := len(h.PK.G1.A) / 2
	before := m.Get(c.Key).HostBytes

	m.MarkHotStreaming(h, "gpu0")
	m.MarkHot(h, "gpu0") // a proof ends
	assert.False(t, h.PK.G1.A[mid].IsInfinity(), "streamed: the GPU reads the host copy for every proof")
	assert.Equal(t, before, m.Get(c.Key).HostBytes)
	h.Release()

	got, err := m.EvictKey(c.Key, Warm)
	require.NoError(t, err)
	require.Equal(t, Warm, got.Tier)
	h, err = m.Acquire(context.Background(), c)
	require.NoError(t, err)
	defer h.Release()
	m.MarkHot(h, "gpu0") // preloaded again, whole
	assert.True(t, h.PK.G1.A[mid].IsInfinity(), "held whole: the host copy goes")
}

func TestNoReleaseWithTwoGPUs(t *testing.T) {
	m, err := New(Config{Dir: t.TempDir(), DevSeed: 1, DevKeysInMemory: true, ReleaseHostCopy: true})
	require.NoError(t, err)
	m.AddDevice("gpu0", &countingEvictor{})
	m.AddDevice("gpu1", &countingEvictor{})
	h, err := m.Acquire(context.Background(), shape(t, 4096))
	require.NoError(t, err)
	defer h.Release()
	mid := len(h.PK.G1.A) / 2
	m.MarkHot(h, "gpu0")
	assert.False(t, h.PK.G1.A[mid].IsInfinity(), "the other GPU may still need the host copy")
	assert.NoError(t, m.MakeRoomOn(h, "gpu1"))
}

// TestSharedLoadEndsOnlyWhenEveryWaiterLeft: callers leave on their own
// contexts; the load goes on while one waits, is cancelled once all have
// left, and a later caller loads the key again.
func TestSharedLoadEndsOnlyWhenEveryWaiterLeft(t *testing.T) {
	m, err := New(Config{Dir: t.TempDir(), DevSeed: 1})
	require.NoError(t, err)
	defer m.Close()
	c := shape(t, 16485)
	ctxA, cancelA := context.WithCancel(context.Background())
	errA := make(chan error, 1)
	go func() { _, err := m.Acquire(ctxA, c); errA <- err }()
	require.Eventually(t, func() bool { return m.Get(c.Key).Refs == 1 }, 30*time.Second, time.Millisecond)
	got := make(chan *Handle, 1)
	go func() {
		h, err := m.Acquire(context.Background(), c)
		assert.NoError(t, err)
		got <- h
	}()
	require.Eventually(t, func() bool { return m.Get(c.Key).Refs == 2 }, 30*time.Second, time.Millisecond)
	cancelA()
	require.ErrorIs(t, <-errA, context.Canceled, "A leaves on its own context")
	h := <-got
	require.NotNil(t, h, "B's load went on")
	assert.Equal(t, 1, m.Get(c.Key).Refs)
	h.Release()
	_, err = m.EvictKey(c.Key, Cold)
	require.NoError(t, err)

	// Every waiter gone: the load is cancelled, and the next caller loads anew.
	m2, err := New(Config{Dir: t.TempDir(), DevSeed: 1, DevKeysInMemory: true})
	require.NoError(t, err)
	defer m2.Close()
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 2)
	for range 2 {
		go func() { _, err := m2.Acquire(ctx, c); errs <- err }()
	}
	require.Eventually(t, func() bool { return m2.Get(c.Key).Refs == 2 }, 30*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-errs, context.Canceled)
	require.ErrorIs(t, <-errs, context.Canceled)
	m2.mu.Lock()
	e := m2.entries[c.Key]
	m2.mu.Unlock()
	if e != nil { // the cancelled load may have ended already
		assert.True(t, e.abandoned, "the last waiter's leaving cancels the load")
		<-e.ready
	}
	h2, err := m2.Acquire(context.Background(), c)
	require.NoError(t, err, "a later caller loads the key again")
	h2.Release()
}

// TestShapeCountsEqualACompile: the counting pass (and porep-synth's own
// counts) give a compile's counts, for every registry circuit, and the
// compile estimate bounds what a compile allocates.
func TestShapeCountsEqualACompile(t *testing.T) {
	m, err := New(Config{Dir: t.TempDir()})
	require.NoError(t, err)
	for _, tc := range []struct {
		id     string
		params map[string]uint64
	}{
		{"porep-synth", map[string]uint64{"constraints": 4096}},
		{"sha256", map[string]uint64{"bytes": 1}},
		{"sha256", map[string]uint64{"bytes": 200}},
		{"poseidon-merkle", map[string]uint64{"depth": 3}},
	} {
		c, err := registry.Default().Resolve(tc.id, tc.params)
		require.NoError(t, err)
		sh, err := m.Shape(context.Background(), c)
		require.NoError(t, err)
		ex, err := c.Example(1)
		require.NoError(t, err)
		circ, err := c.Circuit(ex)
		require.NoError(t, err)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		full, err := r1cs.Compile(circ)
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		assert.Equal(t, [3]int{full.NbPublic, full.NbPrivate, full.NbConstraints},
			[3]int{sh.Sys.NbPublic, sh.Sys.NbPrivate, sh.Sys.NbConstraints}, c.Key)
		assert.LessOrEqual(t, int64(after.TotalAlloc-before.TotalAlloc), sh.CompileBytes(), "%s: compile estimate", c.Key)
	}
}

// TestLoadEndingWellAfterItsWaitersLeftIsWarm: a load whose last waiter
// left after the load's last look at its context ends with a warm key,
// which the next caller gets at once (it is not a cancelled load to wait
// out and start again).
func TestLoadEndingWellAfterItsWaitersLeftIsWarm(t *testing.T) {
	m, err := New(Config{Dir: t.TempDir(), DevSeed: 1, DevKeysInMemory: true})
	require.NoError(t, err)
	defer m.Close()
	c := shape(t, 1024)
	e := &entry{key: c.Key, res: c, ready: make(chan struct{}), hot: map[string]time.Time{}, abandoned: true}
	e.loadCtx, e.cancelLoad = context.WithCancel(m.ctx) // the leave came after the load's last check
	m.mu.Lock()
	m.entries[c.Key] = e
	m.mu.Unlock()
	m.load(e)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h, err := m.Acquire(ctx, c)
	require.NoError(t, err)
	assert.Same(t, e.pk, h.PK, "the loaded key, not a new load")
	h.Release()
}

// onMessage is a slog handler that signals on ch for every record whose
// message is msg, and drops every record.
type onMessage struct {
	msg string
	ch  chan<- struct{}
}

func (h onMessage) Enabled(context.Context, slog.Level) bool { return true }
func (h onMessage) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.ch <- struct{}{}
	}
	return nil
}
func (h onMessage) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h onMessage) WithGroup(string) slog.Handler      { return h }
