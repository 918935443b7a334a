package keys

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Tier is where a key currently lives.
type Tier int

// Tiers, from disk to GPU.
const (
	Cold Tier = iota + 1
	Warm
	Hot
)

func (t Tier) String() string {
	switch t {
	case Cold:
		return "cold"
	case Warm:
		return "warm"
	case Hot:
		return "hot"
	}
	return fmt.Sprintf("tier(%d)", int(t))
}

// ErrTooLarge means a key can never fit the host budget.
var ErrTooLarge = errors.New("key larger than the host key budget")

// Evictor frees one key's resident bases on a device. prover/gpu's backend
// provides it; the call must be safe while other keys prove on the device.
type Evictor interface {
	EvictKey(pk *groth16.ProvingKey) error
}

// Config configures a Manager.
type Config struct {
	// Dir is the key directory (the cold tier). Required.
	Dir string
	// HostBudget bounds the bytes of warm keys; 0 means no bound.
	HostBudget int64
	// GPUBudget bounds the bytes of hot keys on each device; 0: no bound.
	GPUBudget int64
	// DevSeed seeds development setups (devkeys.Rand(DevSeed, 0)).
	DevSeed uint64
	// FixedBase runs development setups' fixed-base multiplications (a GPU
	// backend: prover/gpu); nil means the CPU. Either gives the same keys.
	FixedBase groth16.FixedBaser
	// NoGenerate refuses development keys: only production key files load.
	NoGenerate bool
	// DevKeysInMemory keeps generated development keys in memory only:
	// nothing is written to Dir, and every start generates them again (a
	// 2^27 key's files would take about 90 GB, and its GPU setup takes
	// about 40 s). Keys whose files would not fit Dir's free space are kept
	// in memory too, with a warning.
	DevKeysInMemory bool
	// ReleaseHostCopy gives a key's host memory back once its GPU holds its
	// bases, on a daemon with one GPU: host RSS then holds no key points (a
	// 2^27 key is 61 GiB), and the key lives on that GPU only. Evicting it
	// from there, or the GPU's recovery, takes it to cold; it is loaded (or
	// generated) again on its next use. Mapped key files are left alone.
	ReleaseHostCopy bool
	// DirBudget bounds the bytes of key files in Dir (0: no bound): past
	// it, the least recently used development keys' files are deleted
	// (at start and after each development key written), never those of
	// a key the manager holds and never production files.
	DirBudget int64
	// StaleTemp is how long a temporary file of an interrupted write must
	// have lain unwritten before a manager sharing Dir with another
	// process removes it (default 10 minutes); a manager alone on Dir
	// removes every one at start.
	StaleTemp time.Duration
	// GCPercent sets the Go collector's GOGC (runtime/debug.SetGCPercent):
	// while keys live in the Go heap the manager lowers it, so that the
	// garbage let build up beside them stays near 4 GiB (gc.go). nil leaves
	// the collector alone (GOGC set by the operator).
	GCPercent func(percent int) int
	Log       *slog.Logger
}

// Manager holds the keys. It is safe for concurrent use.
type Manager struct {
	cfg Config
	now func() time.Time

	ctx    context.Context // the loads' parent: cancelled by Close
	cancel context.CancelFunc

	unlockDir  func() // the key directory's shared lock
	unlockOnce sync.Once
	damaged    map[string]error // key files found damaged beside the one a load used

	mu        sync.Mutex
	cond      *sync.Cond // signalled when refs drop or entries leave
	entries   map[string]*entry
	shapes    map[string]*shapeEntry  // counting passes, by shape key
	evictors  map[string]Evictor      // device name → evictor
	verified  map[string]verifiedFile // raw key files hashed, by path
	gcPercent int                     // the GOGC tuneGCLocked last set (100 at start)
	gcSlack   int64                   // gcSlack; tests set less
}

type entry struct {
	key     string
	res     *registry.Resolved
	ready   chan struct{} // closed when loading ends
	loadErr error
	// The load's own context (under the manager's), its waiters (callers
	// of Acquire not yet returned), and whether they all left, which
	// cancels it.
	loadCtx    context.Context
	cancelLoad context.CancelFunc
	waiters    int
	abandoned  bool

	sys       *r1cs.System
	pk        *groth16.ProvingKey
	vk        *groth16.VerifyingKey
	mapped    *keyfile.Key // the raw key file pk is mapped from; nil when decoded
	dev       bool
	hostBytes int64
	gpuBytes  int64
	loadTime  time.Duration
	refs      int
	lastUsed  time.Time
	hot       map[string]time.Time // device → last use there
	// streams are the devices that stream part of the key's bases from
	// its host copy for every proof (MarkHotStreaming): while one holds
	// the key hot, the host copy stays.
	streams    map[string]bool
	evictAsked Tier   // 0, or the tier to drop to once refs reach 0
	deviceOnly string // the GPU holding the only copy (host copy released); "" : none
	lost       bool   // released, and that GPU's copy is gone
}

// New returns a Manager over cfg.Dir (created if missing).
func New(cfg Config) (*Manager, error) {
	if cfg.Dir == "" {
		return nil, errors.New("keys: no key directory")
	}
	if cfg.HostBudget < 0 || cfg.GPUBudget < 0 || cfg.DirBudget < 0 || cfg.StaleTemp < 0 {
		return nil, errors.New("keys: negative budget or StaleTemp")
	}
	if cfg.StaleTemp == 0 {
		cfg.StaleTemp = 10 * time.Minute
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	m := &Manager{cfg: cfg, now: time.Now, entries: map[string]*entry{}, shapes: map[string]*shapeEntry{}, damaged: map[string]error{}, evictors: map[string]Evictor{},
		verified: map[string]verifiedFile{}, gcPercent: 100, gcSlack: gcSlack}
	m.cond = sync.NewCond(&m.mu)
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.openDir()
	return m, nil
}

// Close cancels the loads and checks still running (their waiters get the
// error) and lets go of the key directory. Keys already warm stay usable
// until released.
func (m *Manager) Close() {
	m.cancel()
	m.unlockOnce.Do(m.unlockDir)
}

// AddDevice registers a device's evictor, so that EvictKey and MakeRoomOn
// can free its resident bases.
func (m *Manager) AddDevice(name string, ev Evictor) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.evictors[name] = ev
}

// Handle is one user's reference to a warm key. Release it exactly once.
type Handle struct {
	m        *Manager
	e        *entry
	Key      string
	PK       *groth16.ProvingKey
	VK       *groth16.VerifyingKey
	Sys      *r1cs.System
	Dev      bool
	LoadTime time.Duration // time this Acquire spent loading (0 when warm)
	released bool
}

// Release drops the reference; a pending eviction runs when it was the last.
func (h *Handle) Release() {
	if h.released {
		return
	}
	h.released = true
	m := h.m
	m.mu.Lock()
	h.e.refs--
	h.e.lastUsed = m.now()
	var ask Tier
	if h.e.refs == 0 && h.e.evictAsked != 0 {
		ask, h.e.evictAsked = h.e.evictAsked, 0
	}
	m.mu.Unlock()
	m.cond.Broadcast()
	if ask != 0 {
		if _, err := m.evict(h.e.key, ask); err != nil {
			m.cfg.Log.Warn("deferred key eviction failed", "key", h.e.key, "err", err)
		}
	}
}

// Acquire returns a reference to c's key, loading it into host memory when
// cold (from the key directory, or by a development setup). Concurrent
// Acquires of one cold key share one load, which belongs to none of them:
// it runs under the manager's own context, and ends early only when every
// caller waiting for it has left. A caller whose ctx ends leaves at once
// with ctx's error, without disturbing the others. A load cancelled that
// way is waited out (it may hold budget) and started again for a later
// caller.
func (m *Manager) Acquire(ctx context.Context, c *registry.Resolved) (*Handle, error) {
	start := m.now()
	for {
		e, first, err := m.join(ctx, c)
		if err != nil {
			return nil, err
		}
		if e == nil {
			continue // a cancelled load ended: start another
		}
		select {
		case <-e.ready:
		case <-ctx.Done():
			m.leave(e)
			return nil, fmt.Errorf("key %s: %w", c.Key, ctx.Err())
		}
		m.mu.Lock()
		e.waiters--
		m.mu.Unlock()
		if e.loadErr != nil {
			m.unref(e)
			return nil, e.loadErr
		}
		h := &Handle{m: m, e: e, Key: e.key, PK: e.pk, VK: e.vk, Sys: e.sys, Dev: e.dev}
		if first {
			h.LoadTime = m.now().Sub(start)
		}
		m.mu.Lock()
		err = m.fileDamagedLocked(e, true)
		m.mu.Unlock()
		if err != nil {
			h.Release() // the last user's release takes the key cold
			return nil, err
		}
		return h, nil
	}
}

// join registers a caller of c's key: a reference (so that the entry is
// not evicted under it) and, while the key loads, a waiter of the load,
// which it starts when there is none. It returns nil after waiting for a
// load every caller had left (so that the caller starts a new one).
func (m *Manager) join(ctx context.Context, c *registry.Resolved) (e *entry, first bool, err error) {
	m.mu.Lock()
	e, ok := m.entries[c.Key]
	if ok && e.abandoned {
		m.mu.Unlock()
		select {
		case <-e.ready:
			return nil, false, nil
		case <-ctx.Done():
			return nil, false, fmt.Errorf("key %s: %w", c.Key, ctx.Err())
		}
	}
	if !ok {
		e = &entry{key: c.Key, res: c, ready: make(chan struct{}), hot: map[string]time.Time{}}
		e.loadCtx, e.cancelLoad = context.WithCancel(m.ctx)
		m.entries[c.Key] = e
		go m.load(e)
	}
	e.refs++
	e.waiters++
	m.mu.Unlock()
	return e, !ok, nil
}

// leave undoes join for a caller that stops waiting: the last waiter of a
// load still running cancels it.
func (m *Manager) leave(e *entry) {
	m.mu.Lock()
	e.refs--
	e.waiters--
	if e.waiters == 0 && !isDone(e) {
		e.abandoned = true
		e.cancelLoad()
	}
	m.mu.Unlock()
	m.cond.Broadcast()
}

func (m *Manager) unref(e *entry) {
	m.mu.Lock()
	e.refs--
	m.mu.Unlock()
	m.cond.Broadcast()
}

// load fills e (compile, read or generate, budget) and closes e.ready. On
// failure the entry is removed so that a later Acquire tries again.
func (m *Manager) load(e *entry) {
	start := m.now()
	err := m.loadGuarded(e)
	e.cancelLoad()
	if err == nil {
		// Before the key is ready: a caller that goes on to change the
		// files finds this load's touch done.
		m.touchKey(e.key)
	}
	m.mu.Lock()
	if err != nil {
		e.loadErr = fmt.Errorf("key %s: %w", e.key, err)
		if m.entries[e.key] == e {
			delete(m.entries, e.key)
		}
	} else {
		e.loadTime = m.now().Sub(start)
		e.lastUsed = m.now()
		e.abandoned = false // it ended well before it saw the cancel: a warm key like any other
	}
	// Read under the lock: once ready, another load may evict e.
	mapped, hostBytes, loadTime := e.mapped != nil, e.hostBytes, e.loadTime
	close(e.ready)
	m.tuneGCLocked()
	m.mu.Unlock()
	m.cond.Broadcast()
	if err == nil {
		m.cfg.Log.Info("key warm", "key", e.key, "development", e.dev, "mapped", mapped, "host_bytes", hostBytes, "load", loadTime)
	}
}

// loadGuarded is loadInto with a panic turned into the load's error: the
// load runs on its own goroutine, where a panic would end the daemon.
func (m *Manager) loadGuarded(e *entry) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("load: panic: %v", p)
		}
	}()
	return m.loadInto(e.loadCtx, e)
}

func (m *Manager) loadInto(ctx context.Context, e *entry) error {
	// The counts first (no compile), and the key's room in the budget
	// before any compile or read: a key that can never fit costs nothing.
	sh, err := m.Shape(ctx, e.res)
	if err != nil {
		return err
	}
	e.sys = sh.Sys
	if err := m.reserve(ctx, e, EstimateBytes(e.sys)); err != nil {
		return err
	}
	if err := m.readKeys(ctx, e); err != nil {
		m.mu.Lock()
		e.hostBytes = 0
		m.mu.Unlock()
		return err
	}
	m.mu.Lock()
	e.hostBytes = keyBytes(e.pk) + int64(len(e.vk.G1.IC))*96
	e.gpuBytes = keyBytes(e.pk)
	m.mu.Unlock()
	return nil
}

// compile builds e's constraint system with its matrices, which only a
// development key needs (its setup, and the shape id naming its files);
// the entry keeps the counts, and the matrices (about 11 GB at 2^27) go
// once the setup has summed them.
func (m *Manager) compile(ctx context.Context, e *entry) (*r1cs.System, error) {
	ex, err := e.res.Example(1)
	if err != nil {
		return nil, err
	}
	circ, err := e.res.Circuit(ex)
	if err != nil {
		return nil, fmt.Errorf("shape circuit: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	full, err := r1cs.Compile(circ)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	if c := full; c.NbPublic != e.sys.NbPublic || c.NbPrivate != e.sys.NbPrivate || c.NbConstraints != e.sys.NbConstraints {
		return nil, fmt.Errorf("compile: counts %d public, %d private, %d constraints differ from the shape's %d, %d, %d",
			c.NbPublic, c.NbPrivate, c.NbConstraints, e.sys.NbPublic, e.sys.NbPrivate, e.sys.NbConstraints)
	}
	return full, nil
}

// devFilesFit reports whether a development key of sys fits dir's free
// space as files (its raw key file: the daemon writes no .pk for a
// development key), with the file's size and the free bytes. Where the
// free space cannot be read it assumes the files fit.
func devFilesFit(dir string, sys *r1cs.System) (need, free int64, ok bool) {
	need = keyfile.FileSize(EstimateSize(sys))
	free, known := freeBytes(dir)
	return need, free, !known || need <= free
}

// readKeys loads production keys from the key directory (mapping
// <name>.rawpk when it is there, else decoding <name>.pk), or development
// keys: mapped from their raw key file, else loaded or generated by
// devkeys, which then writes the raw key file for the next load.
func (m *Manager) readKeys(ctx context.Context, e *entry) error {
	name := FileName(e.key)
	base := filepath.Join(m.cfg.Dir, name)
	rawPath, pkPath, vkPath := base+RawExt, base+".pk", base+".vk"
	if _, err := os.Stat(rawPath); err == nil {
		if _, err := os.Stat(pkPath); err == nil {
			m.cfg.Log.Info("key files: the raw key file is used, the .pk beside it is checked apart", "key", e.key,
				"used", rawPath, "checked", pkPath)
			m.checkUnused(pkPath, rawPath, false)
		}
		return m.readRaw(e, rawPath, vkPath)
	}
	if _, err := os.Stat(pkPath); err == nil {
		pk, vk, err := readPair(pkPath, vkPath)
		if err != nil {
			return err
		}
		if err := fits(pkPath, pk, e); err != nil {
			return err
		}
		e.pk, e.vk = pk, vk
		return nil
	}
	if m.cfg.NoGenerate {
		return fmt.Errorf("no key files %s and development keys are off", pkPath)
	}
	full, err := m.compile(ctx, e)
	if err != nil {
		return err
	}
	if m.readDevMapped(e, name, full) {
		return nil
	}
	dir := m.cfg.Dir
	if m.cfg.DevKeysInMemory {
		dir = "" // devkeys: set up, store nothing
	} else if need, free, ok := devFilesFit(m.cfg.Dir, e.sys); !ok {
		m.cfg.Log.Warn("development key kept in memory only: its files would not fit the key directory", "key", e.key,
			"dir", m.cfg.Dir, "need_bytes", need, "free_bytes", free)
		dir = ""
	}
	done := m.progress(e.key)
	pk, vk, info, err := devkeys.GetWith(ctx, dir, name, full, m.cfg.DevSeed, m.cfg.FixedBase, devkeys.WithRawFileOnly())
	done(info)
	if err != nil {
		return err
	}
	if dir == "" {
		returnMemory() // the setup's scalars, column sums and copies (tens of GB at 2^27)
		e.pk, e.vk, e.dev = pk, vk, true
		return nil
	}
	// The key is in its raw file now: prove from the file, as from any raw
	// key file, and give the heap copy's pages back first (the mapping
	// reads every page in): at once, since nothing reads that copy again,
	// rather than through a forced collection (about 10 s at 2^27), which
	// would also leave them where anything still referred to the copy. A
	// key in the heap would hold the collector's goal at twice its size, so
	// that tens of GB of garbage could build up beside it.
	g1, g2 := pk.Bases()
	discardBases(m.cfg.Log, e.key, g1, g2, 0)
	returnMemory() // the copy's objects and the setup's garbage, in the background
	if err := m.mapDev(e, name, full); err != nil {
		return fmt.Errorf("development key written to %s but not mapped: %w", info.RawPath, err)
	}
	if !info.Cached {
		m.tidyDir()
	}
	return nil
}

// progress logs a development setup while it runs (every 10 s) and when it
// ends.
func (m *Manager) progress(key string) func(devkeys.Info) {
	start := m.now()
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				m.cfg.Log.Info("development key: still loading or generating", "key", key, "elapsed", m.now().Sub(start).Round(time.Second))
			}
		}
	}()
	return func(info devkeys.Info) {
		close(stop)
		if info.Cached {
			m.cfg.Log.Info("development key loaded (NOT for production)", "key", key, "path", info.PKPath, "load", info.Load)
			return
		}
		m.cfg.Log.Warn("development key generated (NOT for production: its trapdoor is public)", "key", key,
			"path", cmp.Or(info.PKPath, info.RawPath), "setup", info.Setup, "store", info.Store, "replaced", info.Replaced)
	}
}

// FileName is the key directory's file name (without extension) for a
// shape key.
func FileName(key string) string { return strings.NewReplacer("/", "-", ",", "-").Replace(key) }

// EstimateBytes is the size of the bases of sys's proving key before the
// key exists (groth16.KeySize.Bytes): exact from the column densities
// when sys knows them (its matrices, or Columns in Counts form: a counting
// pass or a circuit that derives them, which bound the key from above),
// else every wire counted in A and B, an upper bound. It reads matrices
// when sys has them (one pass over their column indices); in Counts form
// it costs nothing.
func EstimateBytes(sys *r1cs.System) int64 { return EstimateSize(sys).Bytes() }

// EstimateSize is the shape of sys's key as EstimateBytes sizes it: from
// the known column densities, else every variable in A and B.
func EstimateSize(sys *r1cs.System) groth16.KeySize {
	d, ok := sys.KnownDensity()
	if !ok {
		d = r1cs.Density{Columns: sys.NbVariables(), A: sys.NbVariables(), B: sys.NbVariables()}
	}
	return groth16.SizeFor(sys, d)
}

// keyBytes is the memory of pk's bases as they are (a key built by hand
// may hold L and H apart from Setup's layout).
func keyBytes(pk *groth16.ProvingKey) int64 {
	g1 := len(pk.G1.A) + len(pk.G1.B) + len(pk.G1.L) + len(pk.G1.H)
	return int64(g1)*groth16.G1Bytes + int64(len(pk.G2.B))*groth16.G2Bytes
}

// sortedEntries returns the entries by key (for stable listings).
func (m *Manager) sortedEntries() []*entry {
	out := make([]*entry, 0, len(m.entries))
	for _, e := range m.entries {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// returnMemory gives memory the Go heap freed back to the system now, in
// the background: after a development setup or a released host copy, tens
// of GB sit free in the heap, which the runtime would otherwise return only
// slowly (or not at all under a high memory limit), and which the host's
// other work (synthesized vectors outside the heap) needs.
func returnMemory() { go debug.FreeOSMemory() }
