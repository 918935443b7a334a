package groth16

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Workspace keeps Prove's host scratch from one proof to the next: the
// vector public‖private‖h (not needed by a fused backend given an
// assignment with its own wire vector, r1cs.Assignment.WireVector) and the
// compactions of the wires for A and B (up to the wire vector's size each;
// 4.3 GB each at a 2^27 domain). Without one,
// every Prove allocates them afresh, and their pages are faulted in and
// zeroed on each proof. A prover that proves one key after another (a
// daemon's GPU worker) keeps one Workspace per worker; it grows to the
// largest key seen and is never shrunk. A Workspace serves one Prove at a
// time: a Prove that finds it in use fails with ErrWorkspaceBusy.
//
// The zero Workspace takes its vectors from the Go heap; NewWorkspace takes
// them from a HostAllocator, such as the GPU backend's pinned memory, from
// which the backend's transfers run faster.
type Workspace struct {
	mu        sync.Mutex
	alloc     HostAllocator // nil: the Go heap
	buf, a, b wsVec
	keptA     keptCache // the kept offsets of the last A mask, B's below
	keptB     keptCache
}

// keptCache holds countKept of one mask, known by its first element and
// length: a key's masks are not written after setup, so a Workspace reused
// with one key counts them once (at 2^27, two passes over 134 M flags, about
// 50 ms a partition on the device's path).
type keptCache struct {
	first *bool
	n     int
	k     kept
}

// of returns countKept(mask), from the cache when mask is the one counted
// last.
func (c *keptCache) of(mask []bool) kept {
	if len(mask) > 0 && c.first == &mask[0] && c.n == len(mask) {
		return c.k
	}
	c.k = countKept(mask)
	c.first, c.n = nil, len(mask)
	if len(mask) > 0 {
		c.first = &mask[0]
	}
	return c.k
}

// wsVec is one of a Workspace's vectors.
type wsVec struct {
	v   []fr.Element
	raw []byte // the allocator's memory behind v (nil on the Go heap)
}

// HostAllocator is implemented by backends whose transfers run faster from
// host memory they allocate (prover/gpu's Backend: pinned memory, which the
// GPU reads and writes by DMA). AllocHost returns n bytes aligned to at
// least 8 bytes, not necessarily cleared; FreeHost takes a slice AllocHost
// returned.
type HostAllocator interface {
	AllocHost(n int) ([]byte, error)
	FreeHost(b []byte) error
}

// ErrWorkspaceBusy means a Workspace passed to Prove is in use by another
// Prove.
var ErrWorkspaceBusy = errors.New("groth16: workspace in use by another Prove")

// NewWorkspace returns a Workspace whose vectors alloc provides. It holds
// them until Close, so the allocator (a GPU backend) must outlive it.
func NewWorkspace(alloc HostAllocator) *Workspace { return &Workspace{alloc: alloc} }

// Close returns the Workspace's vectors to their allocator (or to the Go
// heap) and leaves it empty: a later Prove grows it again. It fails with
// ErrWorkspaceBusy while a Prove uses it.
func (ws *Workspace) Close() error {
	if !ws.mu.TryLock() {
		return fmt.Errorf("workspace close: %w", ErrWorkspaceBusy)
	}
	defer ws.mu.Unlock()
	return errors.Join(ws.release(&ws.buf), ws.release(&ws.a), ws.release(&ws.b))
}

// release frees s's memory.
func (ws *Workspace) release(s *wsVec) error {
	raw := s.raw
	*s = wsVec{}
	if raw == nil {
		return nil
	}
	if err := ws.alloc.FreeHost(raw); err != nil {
		return fmt.Errorf("workspace: free %d bytes: %w", len(raw), err)
	}
	return nil
}

// grow returns s's first n elements, first replacing its memory by a fresh
// allocation when it holds fewer. The elements are not cleared.
func (ws *Workspace) grow(s *wsVec, n int) ([]fr.Element, error) {
	if cap(s.v) >= n {
		return s.v[:n], nil
	}
	if err := ws.release(s); err != nil {
		return nil, err
	}
	if ws.alloc == nil {
		s.v = make([]fr.Element, n)
		return s.v, nil
	}
	v, raw, err := AllocVector(ws.alloc, n)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	s.v, s.raw = v, raw
	return v, nil
}

// AllocVector returns n field elements in memory from alloc (not cleared)
// and the bytes behind them, which alloc.FreeHost takes back. Memory that
// is too short or not aligned for field elements is returned to alloc and
// refused.
func AllocVector(alloc HostAllocator, n int) ([]fr.Element, []byte, error) {
	size := n * fr.Bytes
	raw, err := alloc.AllocHost(size)
	if err == nil && (len(raw) < size || uintptr(unsafe.Pointer(unsafe.SliceData(raw)))%8 != 0) {
		err = errors.Join(fmt.Errorf("allocator returned %d bytes at %p, want %d aligned to 8",
			len(raw), unsafe.SliceData(raw), size), alloc.FreeHost(raw))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%d elements: %w", n, err)
	}
	return unsafe.Slice((*fr.Element)(unsafe.Pointer(unsafe.SliceData(raw))), n), raw, nil
}

// compactLater sizes compact(v, mask) in s and returns the vector with the
// function that fills it (nil when v is its own compaction: no column is
// dropped), so that the copy can run later or elsewhere.
func (ws *Workspace) compactLater(v []fr.Element, mask []bool, s *wsVec, kc *keptCache) ([]fr.Element, func(), error) {
	k := kc.of(mask)
	if k.n() == len(v) {
		return v, nil, nil
	}
	out, err := ws.grow(s, k.n())
	if err != nil {
		return nil, nil, err
	}
	out = out[:k.n()]
	return out, func() { k.copy(out, v, mask) }, nil
}
