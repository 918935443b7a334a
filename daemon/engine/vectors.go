package engine

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

// vectors is one job's solved vectors and the memory under them.
type vectors struct {
	asg *r1cs.Assignment // the last solve, or the empty shape to solve into
	mem []byte           // outside the Go heap (hostmem); nil: asg is on the heap
}

// hostVectors makes and frees the engine's out-of-heap vectors and keeps
// them pinned on its pinner, again after the pinner's device recovers.
type hostVectors struct {
	pins   []HostPinner // the first pins, the others adopt; none: vectors live on the Go heap
	devs   []Device     // the devices pins are, in order
	log    *slog.Logger
	warned atomic.Bool // a pin failure was logged

	mu   sync.Mutex
	live map[*vectors]bool // those with mem, pinned or not
}

func newHostVectors(devs []Device, log *slog.Logger) *hostVectors {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	hv := &hostVectors{live: map[*vectors]bool{}, log: log}
	for _, d := range devs {
		if p, ok := d.(HostPinner); ok {
			hv.pins, hv.devs = append(hv.pins, p), append(hv.devs, d)
		}
	}
	return hv
}

// pinAll pins mem on the first pinner and adopts it on the others.
// Pinning is a speed-up only: an error leaves the memory working, staged.
func (hv *hostVectors) pinAll(mem []byte) {
	if err := hv.pins[0].PinHost(mem); err != nil {
		if !hv.warned.Swap(true) { // once: the host's locked-memory limit, say, holds for every set
			hv.log.Warn("solved vectors not pinned: the GPU copies them through its staging buffers", "bytes", len(mem), "err", err)
		}
		return // not pinned: no one may adopt it
	}
	for _, p := range hv.pins[1:] {
		_ = p.AdoptHost(mem)
	}
}

// alloc returns empty vectors shaped for sys in pinned memory outside the
// heap, or nil (Solve then allocates on the heap) when there is no pinner.
// Pinning is a speed-up only: when it fails the vectors are still used.
func (hv *hostVectors) alloc(sys *r1cs.System) (*vectors, error) {
	if len(hv.pins) == 0 {
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
	v := &vectors{mem: mem, asg: &r1cs.Assignment{Public: parts[0], Private: parts[1], A: parts[2], B: parts[3], C: parts[4], Wires: wires}}
	hv.pinAll(mem)
	hv.mu.Lock()
	hv.live[v] = true
	hv.mu.Unlock()
	return v, nil
}

// free releases v's memory (unpinned first); heap vectors are left to the
// collector. v must not be used afterwards.
func (hv *hostVectors) free(v *vectors) error {
	if v == nil {
		return nil
	}
	err := hv.unmap(v)
	v.asg = nil
	return err
}

// unmap releases v's out-of-heap memory, if any, and leaves v.asg alone
// (for vectors Solve moved to the heap).
func (hv *hostVectors) unmap(v *vectors) error {
	if v.mem == nil {
		return nil
	}
	hv.mu.Lock()
	delete(hv.live, v)
	hv.mu.Unlock()
	var err error
	for i := len(hv.pins) - 1; i >= 0; i-- { // adopters forget it before the registration ends
		err = errors.Join(err, hv.pins[i].UnpinHost(v.mem))
	}
	mem := v.mem
	v.mem = nil
	return errors.Join(err, hostmem.Free(mem))
}

// repin restores every live vector's pinning on d after d recovered (a
// new GPU context holds no registrations and no adoptions): the first
// pinner registers again, the others adopt again.
func (hv *hostVectors) repin(d Device) {
	hv.mu.Lock()
	defer hv.mu.Unlock()
	for i, dev := range hv.devs {
		if dev != d {
			continue
		}
		for v := range hv.live {
			if i == 0 {
				_ = hv.pins[0].PinHost(v.mem)
			} else {
				_ = hv.pins[i].AdoptHost(v.mem)
			}
		}
	}
}

// owns reports whether asg's vectors lie in v's memory (Solve kept them
// there), which must hold for v to serve the next job.
func (v *vectors) owns(asg *r1cs.Assignment) bool {
	if v.mem == nil {
		return true
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
