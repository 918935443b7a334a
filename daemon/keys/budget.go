package keys

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// reserve makes room for need bytes of e in the host budget, evicting
// unreferenced warm keys (least recently used first) and waiting while
// keys in use hold the budget. e.hostBytes holds the reservation.
// Fits returns ErrTooLarge (wrapped, with the sizes) when a key of sys's
// counts can never fit the host key budget: a request for it can be refused
// before any work.
func (m *Manager) Fits(sys *r1cs.System) error {
	if need := EstimateBytes(sys); m.cfg.HostBudget > 0 && need > m.cfg.HostBudget {
		return fmt.Errorf("%w: about %d bytes, budget %d", ErrTooLarge, need, m.cfg.HostBudget)
	}
	return nil
}

// msgWaitsForBudget is logged once by a load that waits for keys in use to
// free the host budget.
const msgWaitsForBudget = "key waits for host budget: keys in use hold it"

func (m *Manager) reserve(ctx context.Context, e *entry, need int64) error {
	if m.cfg.HostBudget == 0 {
		return nil
	}
	if need > m.cfg.HostBudget {
		return fmt.Errorf("%w: about %d bytes, budget %d", ErrTooLarge, need, m.cfg.HostBudget)
	}
	stop := context.AfterFunc(ctx, m.cond.Broadcast)
	defer stop()
	m.mu.Lock()
	defer m.mu.Unlock()
	logged := false
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		used := m.hostUsedLocked()
		if used+need <= m.cfg.HostBudget {
			e.hostBytes = need
			return nil
		}
		if v := m.lruLocked(func(x *entry) bool { return x != e && x.refs == 0 && x.hostBytes > 0 }); v != nil {
			m.dropLocked(v, Cold)
			continue
		}
		if !logged {
			// Logged under the lock, before the wait releases it: whoever
			// reads it and then frees budget finds this load waiting.
			m.cfg.Log.Info(msgWaitsForBudget, "key", e.key, "need_bytes", need, "used_bytes", used, "budget", m.cfg.HostBudget)
			logged = true
		}
		m.cond.Wait()
	}
}

func (m *Manager) hostUsedLocked() int64 {
	var n int64
	for _, e := range m.entries {
		n += e.hostBytes
	}
	return n
}

// lruLocked returns the least recently used entry that ok accepts.
func (m *Manager) lruLocked(ok func(*entry) bool) *entry {
	var best *entry
	for _, e := range m.entries {
		if !isReady(e) || !ok(e) {
			continue
		}
		if best == nil || e.lastUsed.Before(best.lastUsed) {
			best = e
		}
	}
	return best
}

// isDone reports whether e's load has ended, well or not.
func isDone(e *entry) bool {
	select {
	case <-e.ready:
		return true
	default:
		return false
	}
}

func isReady(e *entry) bool {
	select {
	case <-e.ready:
		return e.loadErr == nil
	default:
		return false
	}
}

// dropLocked drops e to tier: off every GPU (Warm), and out of host memory
// too (Cold). GPU evictions are started under the lock: Evictors must not
// call back into the Manager.
func (m *Manager) dropLocked(e *entry, tier Tier) error {
	if e.deviceOnly != "" {
		tier = Cold // no host copy to stay warm with
	}
	var errs []error
	for dev := range e.hot {
		if ev := m.evictors[dev]; ev != nil {
			if err := ev.EvictKey(e.pk); err != nil {
				errs = append(errs, fmt.Errorf("evict %s from %s: %w", e.key, dev, err))
				continue
			}
		}
		delete(e.hot, dev)
		delete(e.streams, dev)
	}
	if tier == Cold {
		if err := m.unmapLocked(e); err != nil {
			errs = append(errs, err)
		}
		delete(m.entries, e.key)
		m.cfg.Log.Info("key cold", "key", e.key, "freed_bytes", e.hostBytes)
		e.hostBytes = 0
		m.tuneGCLocked()
	}
	m.cond.Broadcast()
	return errors.Join(errs...)
}

// EvictKey drops key to tier (Warm: off the GPUs; Cold: out of host memory
// too). A key in use is dropped when its last user releases it; the
// returned Info then still shows the current tier, with the eviction
// pending. An unknown key is already cold.
func (m *Manager) EvictKey(key string, tier Tier) (Info, error) {
	if tier != Warm && tier != Cold {
		return Info{}, fmt.Errorf("evict %s: can only drop to warm or cold, not %s", key, tier)
	}
	return m.evict(key, tier)
}

func (m *Manager) evict(key string, tier Tier) (Info, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[key]
	if !ok {
		return Info{Key: key, Tier: Cold}, nil
	}
	if e.refs > 0 || !isReady(e) {
		// In use, or loading for a caller that will hold it: dropped at the last Release.
		if e.evictAsked == 0 || tier < e.evictAsked {
			e.evictAsked = tier
		}
		return m.infoLocked(e), nil
	}
	err := m.dropLocked(e, tier)
	return m.infoLocked(e), err
}

// MarkHot records that device now holds h's bases (and releases the host
// copy, with Config.ReleaseHostCopy, unless a device holding the key streams
// from it: MarkHotStreaming).
func (m *Manager) MarkHot(h *Handle, device string) { m.markHot(h, device, false) }

// MarkHotStreaming is MarkHot for a device that holds part of h's bases
// and streams the rest from the host copy for every proof (a key larger
// than the device's memory budget: gpu.Backend.PlanKey): the host copy
// stays while that device holds the key, whatever Config.ReleaseHostCopy
// says.
func (m *Manager) MarkHotStreaming(h *Handle, device string) { m.markHot(h, device, true) }

func (m *Manager) markHot(h *Handle, device string, streams bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if h.e.lost {
		return
	}
	h.e.hot[device] = m.now()
	if streams {
		if h.e.streams == nil {
			h.e.streams = map[string]bool{}
		}
		h.e.streams[device] = true
	}
	m.releaseHostLocked(h.e, device)
}

// IsHotOn reports whether key's bases are resident on device.
func (m *Manager) IsHotOn(key, device string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[key]
	if !ok {
		return false
	}
	_, hot := e.hot[device]
	return hot
}

// MakeRoomOn frees device memory for h's key on device: least recently
// used hot keys of that device are evicted until the key fits its GPU
// budget. The device's worker calls it before proving, so nothing else of
// that device is on the GPU meanwhile. It first checks that the key can
// still be read: not gone from its only device, and its mapped key file
// not truncated since it was mapped (an error naming the file; the key
// goes cold once its jobs end).
func (m *Manager) MakeRoomOn(h *Handle, device string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := h.usableOn(device); err != nil {
		return err
	}
	if err := m.fileDamagedLocked(h.e, false); err != nil {
		return err
	}
	if _, hot := h.e.hot[device]; hot || m.cfg.GPUBudget == 0 {
		return nil
	}
	if h.e.gpuBytes > m.cfg.GPUBudget {
		return fmt.Errorf("key %s: %d bytes of bases exceed the GPU key budget of %d", h.Key, h.e.gpuBytes, m.cfg.GPUBudget)
	}
	for {
		var used int64
		var victim *entry
		for _, e := range m.entries {
			t, hot := e.hot[device]
			if !hot {
				continue
			}
			used += e.gpuBytes
			if victim == nil || t.Before(victim.hot[device]) {
				victim = e
			}
		}
		if used+h.e.gpuBytes <= m.cfg.GPUBudget || victim == nil {
			return nil
		}
		if ev := m.evictors[device]; ev != nil {
			if err := ev.EvictKey(victim.pk); err != nil {
				return fmt.Errorf("evict %s from %s: %w", victim.key, device, err)
			}
		}
		delete(victim.hot, device)
		delete(victim.streams, device)
		m.cfg.Log.Info("key evicted from GPU", "key", victim.key, "device", device, "for", h.Key)
		if victim.deviceOnly == device {
			m.lostLocked(victim)
		}
	}
}

// Info describes one key.
type Info struct {
	Key         string
	Tier        Tier
	HostBytes   int64
	GPUBytes    int64
	Refs        int
	LastUsed    time.Time
	LoadTime    time.Duration
	HotOn       []string
	Development bool
	EvictionDue Tier // nonzero: pending until the last user releases it
}

func (m *Manager) infoLocked(e *entry) Info {
	in := Info{Key: e.key, Tier: Warm, HostBytes: e.hostBytes, GPUBytes: e.gpuBytes, Refs: e.refs,
		LastUsed: e.lastUsed, LoadTime: e.loadTime, EvictionDue: e.evictAsked}
	if isReady(e) {
		// The load writes e.dev without the lock, before it closes e.ready.
		in.Development = e.dev
	} else {
		in.Tier = Cold
	}
	if _, ok := m.entries[e.key]; !ok {
		in.Tier = Cold
	}
	for d := range e.hot {
		in.HotOn = append(in.HotOn, d)
	}
	if len(in.HotOn) > 0 && in.Tier == Warm {
		in.Tier = Hot
	}
	return in
}

// List describes every key the manager holds (warm or hot), by key.
func (m *Manager) List() []Info {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Info
	for _, e := range m.sortedEntries() {
		out = append(out, m.infoLocked(e))
	}
	return out
}

// Get describes one key (Cold when the manager does not hold it).
func (m *Manager) Get(key string) Info {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.entries[key]; ok {
		return m.infoLocked(e)
	}
	return Info{Key: key, Tier: Cold}
}

// HostUsed is the bytes of warm keys held or reserved.
func (m *Manager) HostUsed() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hostUsedLocked()
}

func readPair(pkPath, vkPath string) (*groth16.ProvingKey, *groth16.VerifyingKey, error) {
	pk, vk := new(groth16.ProvingKey), new(groth16.VerifyingKey)
	if err := readFile(pkPath, pk); err != nil {
		return nil, nil, err
	}
	if err := readFile(vkPath, vk); err != nil {
		return nil, nil, err
	}
	if err := keyfile.CheckPair(pkPath, pk, vkPath, vk); err != nil {
		return nil, nil, err
	}
	return pk, vk, nil
}

func readFile(path string, dst io.ReaderFrom) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	if _, err := dst.ReadFrom(bufio.NewReaderSize(f, 1<<20)); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// ForgetDevice marks every key as not resident on device (its memory was
// lost: the device was re-created after a fault).
func (m *Manager) ForgetDevice(device string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.entries {
		delete(e.hot, device)
		delete(e.streams, device)
		if e.deviceOnly == device {
			m.lostLocked(e)
		}
	}
}
