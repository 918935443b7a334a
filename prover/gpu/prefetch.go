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

// sendAhead starts the upload of the announced vectors that are pinned and
// fit, one per free work vector, on the MSM engine's staging stream, and
// returns without waiting: the engine's next load waits for that stream.
// It runs on the device thread once the L‖H MSM's scalars are loaded.
func (b *Backend) sendAhead(c *driver.Ctx, stage *stager) error {
	st := b.st
	want, ready := st.want, st.wantReady
	st.want, st.wantReady = nil, nil
	if ready != nil {
		select {
		case <-ready:
		default:
			return nil // still being written: their calls upload them
		}
	}
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
		if err := stage.upload(c, dst, raw); err != nil {
			return fmt.Errorf("prefetch %d scalars: %w", len(v), err)
		}
		st.ahead = append(st.ahead, aheadVec{host: unsafe.SliceData(v), n: len(v), dev: dst})
		st.aheadOn = stage
		slot++
	}
	return nil
}

// settleAhead drops the prefetched vectors and waits for their uploads, so
// that the work vectors they went to can be written or freed.
func (st *state) settleAhead(c *driver.Ctx) error {
	st.ahead = nil
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
