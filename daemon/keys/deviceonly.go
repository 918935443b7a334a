package keys

import (
	"errors"
	"fmt"
	"log/slog"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/cuzk-dev/cuzk/internal/hostmem"
)

// A key whose host copy is released lives on one GPU only
// (Config.ReleaseHostCopy): its bases' host pages went back to the system
// once the GPU held them, their addresses kept (the GPU finds its resident
// copy by them) and the first point of every bases set kept too (the GPU
// checks it). Nothing can upload it again, so leaving that GPU (an eviction,
// the device's recovery) takes it to cold, and a job that still holds it
// fails with ErrKeyGone instead of proving from zeros.

// ErrKeyGone means a job's key was released from host memory and has since
// left the GPU that held its only copy: resubmitting loads it again.
var ErrKeyGone = errors.New("key's only copy left the GPU (host copy released): resubmit to load it again")

// releaseHostLocked drops e's host copy once device holds its bases, when
// the configuration asks for it and nothing else could need the host copy:
// one device only, a key in the Go heap (a mapped key's pages are the page
// cache's to reclaim), not released already.
func (m *Manager) releaseHostLocked(e *entry, device string) {
	if !m.cfg.ReleaseHostCopy || len(m.evictors) != 1 || e.mapped != nil || e.deviceOnly != "" || e.pk == nil {
		return
	}
	for d := range e.hot {
		if e.streams[d] {
			return // a device streams bases from the host copy for every proof
		}
	}
	g1, g2 := e.pk.Bases()
	freed := discardBases(m.cfg.Log, e.key, g1, g2, 1) // the first points stay: the GPU compares them
	e.deviceOnly = device
	e.hostBytes = max(0, e.hostBytes-int64(freed))
	m.cfg.Log.Info("key's host copy released: it lives on the GPU only", "key", e.key, "device", device, "freed_bytes", freed)
	returnMemory()
	m.cond.Broadcast()
}

// discardBases gives back the pages of every bases set of a key from its
// point from on (the whole set for 0; reads of them return zeros
// afterwards) and returns the bytes given back; a failure is logged (the
// pages then just stay).
func discardBases(log *slog.Logger, key string, g1 [][]bls12381.G1Affine, g2 [][]bls12381.G2Affine, from int) int {
	n := 0
	for _, s := range g1 {
		n += discardFrom(log, key, s, from)
	}
	for _, s := range g2 {
		n += discardFrom(log, key, s, from)
	}
	return n
}

func discardFrom[T any](log *slog.Logger, key string, set []T, from int) int {
	if len(set) <= from {
		return 0
	}
	n, err := hostmem.Discard(set[from:])
	if err != nil {
		log.Warn("giving a key's host pages back", "key", key, "err", err)
	}
	return n
}

// lostLocked takes a released key whose GPU copy is gone out of the
// manager: the next Acquire loads it again; holders get ErrKeyGone.
func (m *Manager) lostLocked(e *entry) {
	e.lost = true
	clear(e.hot)
	clear(e.streams)
	if m.entries[e.key] == e {
		delete(m.entries, e.key)
	}
	e.hostBytes = 0
	m.cfg.Log.Warn("key cold: its only copy left the GPU", "key", e.key, "device", e.deviceOnly)
	m.cond.Broadcast()
}

// usableOn reports ErrKeyGone when h's key can no longer be proved on device.
func (h *Handle) usableOn(device string) error {
	e := h.e
	if e.lost || (e.deviceOnly != "" && e.deviceOnly != device) {
		return fmt.Errorf("key %s on %s: %w", h.Key, device, ErrKeyGone)
	}
	return nil
}
