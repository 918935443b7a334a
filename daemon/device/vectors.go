package device

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/internal/hostmem"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// HostPinner is a device that can page-lock host memory it does not own
// (a GPU, through gpu.Backend.PinHost). With one among the devices, a
// VectorPool makes the engine's solved vectors outside the Go heap,
// pinned, so that the device moves them by DMA (no staging copies on the
// host's cores) and the Go collector neither counts nor scans them.
type HostPinner interface {
	PinHost(p []byte) error
	UnpinHost(p []byte) error
	// AdoptHost counts p, pinned by another device's PinHost, as pinned on
	// this one (a portable registration serves every GPU); UnpinHost
	// forgets it.
	AdoptHost(p []byte) error
}

// HostVectors is one set of solved vectors in a VectorPool's memory, as
// the engine reads it: the same interface type as engine.HostVectors (an
// alias of one interface literal on both sides), so that VectorPool
// implements engine.VectorPool without this package importing the engine.
type HostVectors = interface {
	Assignment() *r1cs.Assignment
	Owns(asg *r1cs.Assignment) bool
	Release() error
}

// VectorPool makes the engine's solved vectors outside the Go heap
// (internal/hostmem) and keeps them pinned on its pinners, again after a
// pinner's device recovers. It implements engine.VectorPool; daemon/assembly
// makes one over the devices it opens.
type VectorPool struct {
	pins   []HostPinner // the first pins, the others adopt; none: vectors live on the Go heap
	devs   []any        // the devices pins are, in order
	log    *slog.Logger
	warned atomic.Bool // a pin failure was logged

	mu   sync.Mutex
	live map[*vectorSet]bool // those not yet released, pinned or not
}

// NewVectorPool returns the pool over devs: those that are HostPinners pin
// its memory, the first registering it and the others adopting it. With
// none, the pool is not Enabled and the engine solves into the Go heap.
// A pin failure is logged on log (nil: discarded).
func NewVectorPool[D any](devs []D, log *slog.Logger) *VectorPool {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	vp := &VectorPool{live: map[*vectorSet]bool{}, log: log}
	for _, d := range devs {
		if p, ok := any(d).(HostPinner); ok {
			vp.pins, vp.devs = append(vp.pins, p), append(vp.devs, any(d))
		}
	}
	return vp
}

// Enabled implements engine.VectorPool: whether a device pins host memory.
func (vp *VectorPool) Enabled() bool { return len(vp.pins) > 0 }

// pinAll pins mem on the first pinner and adopts it on the others.
// Pinning is a speed-up only: an error leaves the memory working, staged.
func (vp *VectorPool) pinAll(mem []byte) {
	if err := vp.pins[0].PinHost(mem); err != nil {
		if !vp.warned.Swap(true) { // once: the host's locked-memory limit, say, holds for every set
			vp.log.Warn("solved vectors not pinned: the GPU copies them through its staging buffers", "bytes", len(mem), "err", err)
		}
		return // not pinned: no one may adopt it
	}
	for _, p := range vp.pins[1:] {
		_ = p.AdoptHost(mem)
	}
}

// Alloc implements engine.VectorPool: empty vectors shaped for sys in
// pinned memory outside the heap, or nil (Solve then allocates on the
// heap) when there is no pinner. Pinning is a speed-up only: when it fails
// the vectors are still used.
func (vp *VectorPool) Alloc(sys *r1cs.System) (HostVectors, error) {
	if len(vp.pins) == 0 {
		return nil, nil
	}
	n := sys.DomainSize()
	lens := []int{sys.NbPublic, sys.NbPrivate, n, n, n}
	mem, err := hostmem.Alloc(int(sys.AssignmentBytes()))
	if err != nil {
		return nil, fmt.Errorf("vectors: %w", err)
	}
	all := unsafe.Slice((*fr.Element)(unsafe.Pointer(unsafe.SliceData(mem))), len(mem)/fr.Bytes)
	wires := all[:sys.NbPublic+sys.NbPrivate] // Public‖Private: Prove reads it in place
	var parts [5][]fr.Element
	for i, l := range lens {
		parts[i], all = all[:0:l], all[l:]
	}
	v := &vectorSet{pool: vp, mem: mem, asg: &r1cs.Assignment{Public: parts[0], Private: parts[1], A: parts[2], B: parts[3], C: parts[4], Wires: wires}}
	vp.pinAll(mem)
	vp.mu.Lock()
	vp.live[v] = true
	vp.mu.Unlock()
	return v, nil
}

// Repin implements engine.VectorPool: it restores every live set's pinning
// on dev after dev recovered (a new GPU context holds no registrations and
// no adoptions): the first pinner registers again, the others adopt again.
// A device that is none of the pool's pinners is ignored.
func (vp *VectorPool) Repin(dev any) {
	vp.mu.Lock()
	defer vp.mu.Unlock()
	for i, d := range vp.devs {
		if d != dev {
			continue
		}
		for v := range vp.live {
			if i == 0 {
				_ = vp.pins[0].PinHost(v.mem)
			} else {
				_ = vp.pins[i].AdoptHost(v.mem)
			}
		}
	}
}

// vectorSet is one set of vectors Alloc made: its memory, and the empty
// vectors shaped in it. Its user owns it: one goroutine at a time.
type vectorSet struct {
	pool *VectorPool
	asg  *r1cs.Assignment // the empty shape in mem; nil once released
	mem  []byte           // outside the Go heap (hostmem); nil once released
}

// Assignment is the set's empty vectors, to solve into (r1cs.WithBuffers);
// nil once released.
func (v *vectorSet) Assignment() *r1cs.Assignment { return v.asg }

// Owns reports whether asg's vectors lie in the set's memory (Solve kept
// them there), which must hold for the set to serve the next job.
func (v *vectorSet) Owns(asg *r1cs.Assignment) bool {
	if v.mem == nil {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(v.mem)))
	hi := lo + uintptr(len(v.mem))
	for _, s := range [][]fr.Element{asg.Public, asg.Private, asg.A, asg.B, asg.C} {
		if len(s) == 0 {
			continue
		}
		p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
		if p < lo || p+uintptr(len(s))*fr.Bytes > hi {
			return false
		}
	}
	return true
}

// Release unpins the set's memory on every pinner and frees it; a second
// Release does nothing. Vectors in the memory must not be used afterwards.
func (v *vectorSet) Release() error {
	if v.mem == nil {
		return nil
	}
	vp := v.pool
	vp.mu.Lock()
	delete(vp.live, v)
	vp.mu.Unlock()
	var err error
	for i := len(vp.pins) - 1; i >= 0; i-- { // adopters forget it before the registration ends
		err = errors.Join(err, vp.pins[i].UnpinHost(v.mem))
	}
	mem := v.mem
	v.mem, v.asg = nil, nil
	return errors.Join(err, hostmem.Free(mem))
}
