package gpu

import (
	"context"
	"errors"
	"fmt"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// prefetchSlots are the quotient's work vectors that hold prefetched
// scalars during the L‖H MSM of MSMQuotientLH: vecs[0] and vecs[2] (no
// vecs[2] for the lean quotient), which that MSM does not read. vecs[1]
// holds h until the MSM's own scalars are loaded, by a device copy that is
// not ordered with the prefetch stream.
var prefetchSlots = [...]int{0, 2}

// aheadVec is a scalar vector sent to the device before the call that uses
// it: the host slice it copies (by address and length) and where it is.
type aheadVec struct {
	host *fr.Element
	n    int
	dev  driver.DevicePtr
}

// Prefetch implements groth16.Prefetcher: it announces scalar vectors of
// MSM calls to come (MSMG1, MSMG2, MSMB). The next MSMQuotientLH sends those
// that lie in pinned host memory (AllocHost) and fit a work vector of its
// quotient to the device while its L‖H MSM computes, when the PCIe link is
// otherwise idle; a later MSM call whose scalars are such a vector, the same
// slice, then copies them on the device instead of uploading them. Each
// prefetched vector serves one call. The caller must leave the announced
// vectors unchanged until the calls that use them have returned. A new
// Prefetch replaces the announcement, and any quotient or NTT drops what was
// sent and not used (its vectors are the quotient's). Vectors not sent, for
// whatever reason, are uploaded by their calls as usual. Prefetch waits
// for the uploads of the vectors it drops, so that their host memory may be
// reused once it returns (a Prefetch of nothing, after a Prove stopped
// early).
func (b *Backend) Prefetch(ctx context.Context, scalars ...[]fr.Element) error {
	return b.PrefetchReady(ctx, nil, scalars...)
}

// PrefetchReady implements groth16.ReadyPrefetcher: Prefetch of vectors
// that hold their values once ready is closed (nil: at once). The next
// MSMQuotientLH sends them only if ready is closed when its L‖H scalars are
// loaded; it does not wait for it, since the device would idle meanwhile.
func (b *Backend) PrefetchReady(ctx context.Context, ready <-chan struct{}, scalars ...[]fr.Element) error {
	want := make([][]fr.Element, 0, len(scalars))
	for _, s := range scalars {
		if len(s) > 0 {
			want = append(want, s)
		}
	}
	return b.do(ctx, func(c *driver.Ctx) error {
		// The next quotient's vector (PrefetchQuotient) is this proof's
		// own: it stays.
		b.st.ahead, b.st.sending = nil, nil
		if err := b.st.waitAhead(c); err != nil {
			return fmt.Errorf("prefetch: %w", err)
		}
		b.st.want, b.st.wantReady = want, ready
		return nil
	})
}

// aheadSend is an announced vector chosen for a work vector and on its way
// there in shares (sendAhead): off of its bytes are queued.
type aheadSend struct {
	vec aheadVec
	raw []byte
	off int
}

// aheadShareAlign rounds a share of the announced vectors up to whole
// pages.
const aheadShareAlign = 4096

// aheadShare is the bytes of left to queue beside chunk i of chunks: left
// divided by the chunks left (i's included), rounded up to aheadShareAlign,
// and all of it at the last chunk. Over the chunks the shares sum to left,
// none more than one chunk's part rounded up.
func aheadShare(left, i, chunks int) int {
	if i >= chunks-1 {
		return left
	}
	share := (left + chunks - i - 1) / (chunks - i)
	return min(left, (share+aheadShareAlign-1)/aheadShareAlign*aheadShareAlign)
}

// sendAhead queues, beside chunk i of the chunks of the L‖H MSM (one: a
// single pass), a share of the announced vectors that are pinned and fit,
// one per free work vector, on the MSM engine's staging stream, and returns
// without waiting: the engine's next load waits for that stream. The first
// call that finds the vectors ready chooses them; each call then queues the
// bytes still to send divided by the chunks left (this one included), so
// that the uploads spread over the chunks' spare link time instead of
// holding up the next MSM's start, and the last chunk queues the rest. A
// vector serves its call (scalarsFor) once all of it is queued. Vectors
// still not ready at the last chunk are left to their calls, as the device
// would otherwise idle. It runs on the device thread, after chunk i's next
// bases are queued.
func (b *Backend) sendAhead(c *driver.Ctx, stage *stager, i, chunks int) error {
	st := b.st
	last := i >= chunks-1
	if st.want != nil {
		if st.wantReady != nil {
			select {
			case <-st.wantReady:
			default:
				if last {
					st.want, st.wantReady = nil, nil // still being written: their calls upload them
				}
				return nil
			}
		}
		st.chooseAhead(c, stage)
	}
	left := 0
	for _, s := range st.sending {
		left += len(s.raw) - s.off
	}
	share := aheadShare(left, i, chunks)
	for share > 0 && len(st.sending) > 0 {
		s := &st.sending[0]
		n := min(share, len(s.raw)-s.off)
		if err := stage.upload(c, s.vec.dev.Add(s.off), s.raw[s.off:s.off+n]); err != nil {
			return fmt.Errorf("prefetch %d scalars: %w", s.vec.n, err)
		}
		s.off += n
		share -= n
		if s.off == len(s.raw) {
			st.ahead = append(st.ahead, s.vec)
			st.sending = st.sending[1:]
		}
	}
	return nil
}

// chooseAhead takes the announced vectors (want) and puts those that are
// pinned and fit a work vector, one per free work vector, on the list to
// send (sending), their uploads to go on stage's stream.
func (st *state) chooseAhead(c *driver.Ctx, stage *stager) {
	want := st.want
	st.want, st.wantReady = nil, nil
	slot := 0
	for _, v := range want {
		for slot < len(prefetchSlots) && st.vecs[prefetchSlots[slot]] == 0 {
			slot++
		}
		if slot == len(prefetchSlots) {
			break
		}
		raw := driver.Bytes(v)
		if len(v) > 1<<st.vecLog || !c.Pinned(raw) {
			continue
		}
		st.sending = append(st.sending, aheadSend{
			vec: aheadVec{host: unsafe.SliceData(v), n: len(v), dev: st.vecs[prefetchSlots[slot]]}, raw: raw})
		st.aheadOn = stage
		slot++
	}
}

// settleAhead drops the prefetched vectors (those partly sent and the
// quotient's included) and the MSM engine's chunks sent into work vector 1
// (msm_ring.go), and waits for their uploads, so that the work vectors
// they went to can be written or freed.
func (st *state) settleAhead(c *driver.Ctx) error {
	st.ahead, st.sending, st.quot = nil, nil, quotientAhead{}
	var err error
	if st.ringDrop != nil {
		err = st.ringDrop(c)
	}
	return errors.Join(err, st.waitAhead(c))
}

// waitAhead waits for every upload sent ahead so far.
func (st *state) waitAhead(c *driver.Ctx) error {
	if st.aheadOn == nil {
		return nil
	}
	err := st.aheadOn.wait(c)
	st.aheadOn = nil
	return err
}

// scalarsFor returns the MSM scalars s: on the device where a prefetched
// copy of the same slice is waiting (which it takes), else on the host.
func (b *Backend) scalarsFor(s []fr.Element) msmScalars {
	st := b.st
	for i, a := range st.ahead {
		if a.host == unsafe.SliceData(s) && a.n == len(s) {
			st.ahead = append(st.ahead[:i], st.ahead[i+1:]...)
			return msmScalars{dev: a.dev, ndev: a.n}
		}
	}
	return hostScalars(s)
}

// quotientAhead is the next quotient's first vector (a) on its way into
// work vector 1 (PrefetchQuotient): its source, asked beside each chunk
// with link room until it gives a vector (next), that vector (want), sent
// in shares beside the chunks of the MSMs before that quotient (send), then
// all of it queued (ready), in the work vectors of allocation gen.
type quotientAhead struct {
	next  func() []fr.Element
	want  []fr.Element
	send  *aheadSend
	ready *aheadVec
	gen   uint64
}

// pending reports whether a vector is to be asked for, announced or on its
// way.
func (q *quotientAhead) pending() bool { return q.next != nil || q.want != nil || q.send != nil }

// PrefetchQuotient tells the Backend where to find the first vector (the A
// evaluations) of the next proof's quotient while this proof's A and B
// MSMs are still to run: beside their chunks, when the link has room (bases
// resident, or G2's, see msmJob.linkSpare), it calls next until next
// returns a vector (nil: none yet), and sends that vector into work vector
// 1, which no MSM between two quotients reads, in shares over the chunks
// left. next runs on the device thread and must not call the Backend. The
// next quotient (MSMQuotientLH or QuotientH) whose a is the same slice, in
// the same work vectors, transforms it there, uploading only what was not
// sent, instead of uploading all of it first while the device waits (4.3
// GB at 2^27, about 80 ms at 54 GB/s). Any other quotient, NTT, batch of
// MSMs or fixed-base call drops it, as does PrefetchQuotient(ctx, nil),
// which also waits for its upload so that the vector's memory may be
// reused once it returns. The caller must leave a vector next gave
// unchanged until the quotient that uses it, or the call that drops it,
// has returned. Only a pinned vector (AllocHost) of at most the work
// vectors' length is sent.
func (b *Backend) PrefetchQuotient(ctx context.Context, next func() []fr.Element) error {
	return b.do(context.WithoutCancel(ctx), func(c *driver.Ctx) error {
		st := b.st
		if next == nil {
			err := st.dropQuotientAhead(c)
			if err != nil {
				return fmt.Errorf("drop the quotient's vector sent ahead: %w", err)
			}
			return nil
		}
		st.quot = quotientAhead{next: next}
		return nil
	})
}

// dropQuotientAhead forgets the quotient's vector sent ahead and waits for
// its upload.
func (st *state) dropQuotientAhead(c *driver.Ctx) error {
	st.quot = quotientAhead{}
	return st.waitAhead(c)
}

// quotientBeside is the MSM engine's work beside chunk i of j's chunks
// (msmState.beside): a share (aheadShare) of the quotient's vector
// announced by PrefetchQuotient, when j leaves the link room.
func (b *Backend) quotientBeside(c *driver.Ctx, stage *stager, j *msmJob, i, chunks int) error {
	q := &b.st.quot
	if !q.pending() || !j.linkSpare() {
		return nil
	}
	st := b.st
	if q.next != nil {
		if q.want = q.next(); q.want == nil {
			return nil // not yet: asked again beside the next chunk with room
		}
		q.next = nil
	}
	if q.want != nil {
		a := q.want
		q.want = nil
		raw := driver.Bytes(a)
		if st.vecs[1] == 0 || len(a) > 1<<st.vecLog || !c.Pinned(raw) {
			return nil // the quotient uploads it as usual
		}
		q.send = &aheadSend{vec: aheadVec{host: unsafe.SliceData(a), n: len(a), dev: st.vecs[1]}, raw: raw}
		q.gen = st.vecGen
		st.aheadOn = stage
	}
	s := q.send
	n := aheadShare(len(s.raw)-s.off, i, chunks)
	if j.streamed != nil {
		n = min(n, j.roomBeside())
	}
	if n > 0 {
		if err := stage.upload(c, s.vec.dev.Add(s.off), s.raw[s.off:s.off+n]); err != nil {
			return fmt.Errorf("send the next quotient's first %d scalars ahead: %w", s.vec.n, err)
		}
		s.off += n
	}
	if s.off == len(s.raw) {
		q.ready, q.send = &s.vec, nil
	}
	return nil
}

// takeQuotientAhead returns where a, the first vector of the quotient
// about to run, waits in work vector 1 and how many of its first bytes
// were queued there (dev 0: none), and forgets what was sent ahead either
// way. The caller settles the stager's stream (the quotient's prepare
// does) before the vector is read, and uses it only if the work vectors
// are still those it went to (aheadKept).
func (st *state) takeQuotientAhead(a []fr.Element) quotientSent {
	q := st.quot
	st.quot = quotientAhead{}
	v, n := q.ready, 0
	if v != nil {
		n = v.n * elemBytes
	} else if q.send != nil {
		v, n = &q.send.vec, q.send.off
	}
	if v == nil || n == 0 || v.host != unsafe.SliceData(a) || v.n != len(a) {
		return quotientSent{}
	}
	return quotientSent{dev: v.dev, gen: q.gen, bytes: n}
}

// aheadKept reports whether a vector sent ahead into dev of the work
// vectors of allocation gen is still there: those vectors were not
// reallocated since, and dev is work vector 1.
func (st *state) aheadKept(dev driver.DevicePtr, gen uint64) bool {
	return dev != 0 && gen == st.vecGen && dev == st.vecs[1]
}

// placeAhead redirects the host scalars of s to their copy on the device
// where a vector sent ahead (all of it queued: ahead) holds their memory,
// which it leaves for the call it was sent for (msmJob.place).
func (b *Backend) placeAhead(s msmScalars) msmScalars {
	if len(s.host) == 0 || s.hdev != 0 {
		return s
	}
	for _, a := range b.st.ahead {
		if off, ok := within(s.host, a.host, a.n); ok {
			s.hdev = a.dev.Add(off)
			return s
		}
	}
	return s
}

// within reports whether the memory of s lies inside the n elements at
// host, and at which byte offset.
func within(s []fr.Element, host *fr.Element, n int) (int, bool) {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	alo := uintptr(unsafe.Pointer(host))
	if len(s) == 0 || lo < alo || lo+uintptr(len(s)*elemBytes) > alo+uintptr(n*elemBytes) {
		return 0, false
	}
	return int(lo - alo), true
}

// wantHolds reports whether a vector announced by Prefetch, pinned and no
// longer than a work vector, holds the memory of s: once sent ahead, it
// serves s too (placeAhead).
func (st *state) wantHolds(c *driver.Ctx, s []fr.Element) bool {
	for _, v := range st.want {
		if _, ok := within(s, unsafe.SliceData(v), len(v)); ok && len(v) <= 1<<st.vecLog && c.Pinned(driver.Bytes(v)) {
			return true
		}
	}
	return false
}
