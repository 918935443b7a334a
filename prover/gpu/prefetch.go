package gpu

import (
	"context"
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
		if err := b.st.settleAhead(c); err != nil {
			return fmt.Errorf("prefetch: %w", err)
		}
		b.st.want, b.st.wantReady = want, ready
		return nil
	})
}

// sendAhead sends the announced vectors that are pinned and fit, one per
// free work vector, on the MSM engine's staging stream, spread over the
// L‖H MSM's chunks: it runs once chunk i of n has its scalars on the device
// and the next chunk's bases queued (one pass: i = 0, n = 1), and queues
// an equal share of what is left to send, all of it at the last chunk. So
// the vectors ride the link beside the chunks' bases, where a compute-bound
// MSM leaves it idle, rather than queue in one piece ahead of the bases and
// scalars of the chunks that follow (or of the next call). It returns
// without waiting: the engine's next load waits for that stream.
//
// Vectors still being written (PrefetchReady) are chosen at the first
// chunk that finds them ready, and dropped (left to their calls) if the
// last chunk does not; the device never waits for them.
func (b *Backend) sendAhead(c *driver.Ctx, stage *stager, i, n int) error {
	st := b.st
	if len(st.want) > 0 {
		if !closed(st.wantReady) {
			if i >= n-1 {
				st.want, st.wantReady = nil, nil // still being written: their calls upload them
			}
			return nil
		}
		b.chooseAhead(c, stage)
	}
	left := 0
	for _, p := range st.pending {
		left += len(p.src)
	}
	if left == 0 {
		return nil
	}
	share := aheadShare(left, i, n)
	for share > 0 && len(st.pending) > 0 {
		p := &st.pending[0]
		k := min(share, len(p.src))
		if err := stage.upload(c, p.dst, p.src[:k]); err != nil {
			return fmt.Errorf("prefetch %d bytes: %w", k, err)
		}
		p.dst, p.src, share = p.dst.Add(k), p.src[k:], share-k
		if len(p.src) == 0 {
			st.pending = st.pending[1:]
		}
	}
	return nil
}

// aheadShare is how many of left bytes still to send ahead go with chunk
// i of n: an equal share of them in whole pages, all of them at the last.
func aheadShare(left, i, n int) int {
	if i >= n-1 {
		return left
	}
	return min(left, (left/(n-i)+4095)&^4095)
}

// closed reports whether ready is nil or closed.
func closed(ready <-chan struct{}) bool {
	if ready == nil {
		return true
	}
	select {
	case <-ready:
		return true
	default:
		return false
	}
}

// chooseAhead takes the announced vectors into free work vectors: each
// becomes an aheadVec (later calls find it by scalarsFor) and bytes still
// to send (st.pending); want is cleared.
func (b *Backend) chooseAhead(c *driver.Ctx, stage *stager) {
	st := b.st
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
		dst := st.vecs[prefetchSlots[slot]]
		st.pending = append(st.pending, aheadPiece{dst: dst, src: raw})
		st.ahead = append(st.ahead, aheadVec{host: unsafe.SliceData(v), n: len(v), dev: dst})
		st.aheadOn = stage
		slot++
	}
}

// aheadPiece is what is left to send of a vector chosen by chooseAhead.
type aheadPiece struct {
	dst driver.DevicePtr
	src []byte
}

// settleAhead drops the prefetched vectors and waits for their uploads, so
// that the work vectors they went to can be written or freed.
func (st *state) settleAhead(c *driver.Ctx) error {
	st.ahead, st.pending = nil, nil
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
