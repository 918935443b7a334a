package gpu

import (
	"context"
	"errors"
	"fmt"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// QuotientH implements groth16.Backend: given the evaluations a, b, c over
// the domain H of size n = len(a) (gnark-crypto's fft.NewDomain(n)), it
// returns the n coefficients of h = (a·b − c)/Z, Z = X^n − 1, computed on the
// coset g·H (g = 7, gnark-crypto's generator of Fr*) exactly as prover/cpu
// does, so the results are equal element for element. The result is written
// into a's storage; b and c are left unchanged. It checks ctx between its
// uploads and transforms (see Backend).
func (b *Backend) QuotientH(ctx context.Context, a, bv, c []fr.Element) ([]fr.Element, error) {
	logN, err := quotientSize(a, bv, c)
	if err != nil {
		return nil, fmt.Errorf("quotient: %w", err)
	}
	err = b.do(ctx, func(cx *driver.Ctx) error {
		start := time.Now()
		dev, ahead, err := b.quotient(ctx, cx, logN, a, bv, c, nil, deviceSpan{}, b.st.takeQuotientAhead(a))
		if err != nil {
			return err
		}
		q := QuotientTimings{Compute: time.Since(start), Device: dev, Points: len(a), AheadBytes: ahead}
		if err := interrupted(ctx, cx, "download h"); err != nil {
			return err
		}
		if err := b.st.stage.download(cx, driver.Bytes(a), b.st.vecs[1]); err != nil {
			return err
		}
		q.Download = time.Since(start) - q.Compute
		reportQuotient(ctx, b.st.device, start, q)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("quotient 2^%d on GPU: %w", logN, err)
	}
	return a, nil
}

// MSMQuotientLH implements groth16.QuotientLHBackend: the quotient h of
// QuotientH, then Σ lh[i]·s[i] with s = private ‖ h[:n−1], in one device
// call. h stays in the quotient's device vector and is copied from there
// into the MSM's scalars, so it never crosses the PCIe link (at n = 2^27:
// 4.3 GB down and up saved, and Prove's host copy of it). The private wires
// and, where the L‖H bases stream, their first chunk go up while the
// quotient's last transforms run, when the link is idle (their upload
// would otherwise wait for the quotient's end), and the
// vectors announced by Prefetch go up while the L‖H MSM computes. a, b and
// c are left unchanged. A call stopped early (an error, ctx done) drops
// what Prefetch announced or sent.
func (b *Backend) MSMQuotientLH(ctx context.Context, lh []bls12381.G1Affine, private, a, bv, c []fr.Element) (bls12381.G1Jac, error) {
	var res bls12381.G1Jac
	logN, err := quotientSize(a, bv, c)
	if err == nil {
		err = checkMSMInput(len(lh), len(private)+len(a)-1) // the scalars private ‖ h[:n−1]
	}
	if err != nil {
		return res, fmt.Errorf("quotient and msm L‖H: %w", err)
	}
	m, err := b.msmEngine()
	if err != nil {
		return res, fmt.Errorf("quotient and msm L‖H: %w", err)
	}
	err = b.do(ctx, func(cx *driver.Ctx) (err error) {
		defer func() {
			if err != nil {
				b.st.want, b.st.wantReady, b.st.ahead, b.st.sending = nil, nil, nil, nil
			}
		}()
		st := m.st
		sent := b.st.takeQuotientAhead(a)
		// The quotient's vectors and tables first, so that the MSM's shape
		// (in chunks where both do not fit whole) leaves room for them.
		if _, err := b.prepare(cx, logN); err != nil {
			return err
		}
		j, err := st.prepare(cx, st.g1, lh, driver.Bytes(lh), len(lh))
		if err != nil {
			return err
		}
		// Where an announced vector holds the private wires (the A wires:
		// the C2 key's A set has no point at infinity, so they are the
		// wire vector itself), the chunks run from the last: the H chunks,
		// whose scalars (h) are on the device, go first while the
		// announced vectors go up beside them, and the L chunks then copy
		// their scalars from there, so the private wires cross the link
		// once, not twice.
		reverse := j.chunked() && b.st.wantHolds(cx, private)
		// While the quotient's last transforms run, the link is idle and c
		// has left the arena: the host part of the scalars (of the first
		// chunk's, in chunks) goes up, then the first chunk's bases where
		// they stream.
		ranges := chunkRanges(len(lh), j.chunk)
		first := ranges[0]
		if reverse {
			first = ranges[len(ranges)-1]
		}
		tail := func() error {
			if !reverse {
				if err := st.queueHost(cx, j, private[:min(len(private), j.chunk)]); err != nil {
					return err
				}
			}
			return st.sendOwnFirst(cx, j, first)
		}
		idle, err := j.idleArena(cx, st)
		if err != nil {
			return err
		}
		start := time.Now()
		dev, ahead, err := b.quotient(ctx, cx, logN, a, bv, c, tail, idle, sent)
		if err != nil {
			return err
		}
		reportQuotient(ctx, b.st.device, start, QuotientTimings{Compute: time.Since(start), Device: dev, Points: len(a),
			AheadBytes: ahead})
		deadline := hOnlyChunks(len(lh), j.chunk, len(private)) // the announced vectors all sent by then
		j.beside = func(i, chunks int) error {
			if reverse {
				chunks = min(chunks, deadline)
			}
			return b.sendAhead(cx, st.stage, i, chunks)
		}
		j.reverse = reverse
		if reverse {
			j.place = b.placeAhead
		}
		scalars := msmScalars{host: private, dev: b.st.vecs[1], ndev: len(a) - 1, queued: !reverse}
		res, err = msmFinish(ctx, st, cx, j, scalars, combineG1)
		return err
	})
	if err != nil {
		return res, fmt.Errorf("quotient 2^%d and msm L‖H (%d points) on GPU: %w", logN, len(lh), err)
	}
	return res, nil
}

// hOnlyChunks is how many of the chunks of chunk points over n points lie
// wholly past the first nPriv (the L‖H MSM's chunks of h alone), at least 1.
func hOnlyChunks(n, chunk, nPriv int) int {
	k := 0
	for _, r := range chunkRanges(n, chunk) {
		if r.lo >= nPriv {
			k++
		}
	}
	return max(k, 1)
}

// quotientSize checks the quotient's inputs and returns log2 of their length.
func quotientSize(a, bv, c []fr.Element) (uint32, error) {
	n := len(a)
	if len(bv) != n || len(c) != n {
		return 0, fmt.Errorf("lengths %d, %d, %d differ", n, len(bv), len(c))
	}
	return logSize(n)
}

// quotientSent is where the quotient's a waits, sent ahead
// (takeQuotientAhead): its first bytes in work vector 1 of the allocation
// gen; dev 0 when none was sent.
type quotientSent struct {
	dev   driver.DevicePtr
	gen   uint64
	bytes int
}

// quotient computes h into the second work vector, st.vecs[1], and returns
// when it is there (no download yet), with its device span by CUDA events:
// from the start of a's upload (on the staging stream) to the end of the
// last transform (on the compute stream).
// tail, when not nil, runs once every transform is queued, while the last
// ones run: the link is idle then, so an upload it starts overlaps them.
//
// With three work vectors each upload overlaps the previous vector's
// transforms. The lean quotient (two work vectors, see prepare) multiplies
// a·b into a's vector first and then puts c into b's: c goes up into
// spare (device memory idle during the quotient: the L‖H MSM's arena, 4.9
// GiB at 16 GiB against c's 4 GiB at 2^27) while a and b transform, and
// moves into b's vector by a device copy once the product is made; only
// the part of c that spare cannot hold goes up then, its link time not
// hidden.
func (b *Backend) quotient(ctx context.Context, cx *driver.Ctx, logN uint32, a, bv, c []fr.Element, tail func() error,
	spare deviceSpan, sent quotientSent) (span time.Duration, aheadBytes int64, err error) {
	d, err := b.prepare(cx, logN) // settles the stager's stream: a sent ahead is all there
	if err != nil {
		return 0, 0, err
	}
	st := b.st
	if err := cx.Record(st.qev[0], st.stage.stream); err != nil {
		return 0, 0, fmt.Errorf("quotient: %w", err)
	}
	lean := st.nvec == 2
	// a·b is symmetric: with a sent ahead into vector 1 (all of it, or its
	// first bytes, the rest going up now), b takes vector 0, and every
	// later step reads the vectors as it would otherwise.
	dsts := st.vecs
	ahead := st.aheadKept(sent.dev, sent.gen)
	if ahead {
		dsts[0], dsts[1] = st.vecs[1], st.vecs[0]
	}
	for i, v := range [][]fr.Element{a, bv, c} {
		if err := interrupted(ctx, cx, fmt.Sprintf("quotient: upload %c", "abc"[i])); err != nil {
			return 0, 0, err
		}
		dst, raw := dsts[i], driver.Bytes(v)
		up := dst // where raw goes: a's part not sent ahead after the part that was
		if i == 0 && ahead {
			raw = raw[sent.bytes:]
			up = dst.Add(sent.bytes)
		}
		if lean && i == 2 {
			// c goes into vector 1 (b's, or a's where a was sent ahead)
			// once a·b is in vector 0; it waits in spare meanwhile.
			early := raw[:min(len(raw), spare.n)]
			if len(early) > 0 {
				if err := st.stage.upload(cx, spare.ptr, early); err != nil {
					return 0, 0, err
				}
			}
			if err := st.k.multiply(cx, st.compute, st.vecs[0], st.vecs[1], d); err != nil {
				return 0, 0, err
			}
			if err := cx.SyncStream(st.compute); err != nil {
				return 0, 0, fmt.Errorf("quotient product: %w", err)
			}
			dst = st.vecs[1]
			if len(early) > 0 {
				if err := cx.DtoDAsync(dst, spare.ptr, len(early), st.stage.stream); err != nil {
					return 0, 0, fmt.Errorf("quotient: c's first %d bytes: %w", len(early), err)
				}
			}
			raw = raw[len(early):]
			if err := st.stage.upload(cx, dst.Add(len(early)), raw); err != nil {
				return 0, 0, err
			}
		} else if err := st.stage.upload(cx, up, raw); err != nil {
			return 0, 0, err
		}
		if err := st.stage.wait(cx); err != nil {
			return 0, 0, err
		}
		// Queued behind the previous vector's transforms; the next upload
		// overlaps them.
		if err := st.k.toCoset(cx, st.compute, dst, d); err != nil {
			return 0, 0, err
		}
	}
	if err := interrupted(ctx, cx, "quotient: division and interpolation"); err != nil {
		return 0, 0, err
	}
	if lean {
		err = st.k.subtractDivideAndInterpolate(cx, st.compute, st.vecs[1], st.vecs[0], st.vecs[1], d)
	} else {
		err = st.k.divideAndInterpolate(cx, st.compute, st.vecs[1], st.vecs[0], st.vecs[1], st.vecs[2], d)
	}
	if err != nil {
		return 0, 0, err
	}
	if err := cx.Record(st.qev[1], st.compute); err != nil {
		return 0, 0, fmt.Errorf("quotient: %w", err)
	}
	if err := st.end.mark(cx, st.compute); err != nil {
		return 0, 0, fmt.Errorf("quotient: %w", err)
	}
	if tail != nil {
		if err := tail(); err != nil {
			return 0, 0, err
		}
	}
	if err := cx.SyncStream(st.compute); err != nil {
		return 0, 0, fmt.Errorf("quotient kernels: %w", err)
	}
	if span, err = cx.Elapsed(st.qev[0], st.qev[1]); err != nil {
		return 0, 0, fmt.Errorf("quotient: device span: %w", err)
	}
	if ahead {
		aheadBytes = int64(sent.bytes)
	}
	return span, aheadBytes, nil
}

// NTT replaces the coefficients in v by the evaluations of their polynomial
// over the domain of size len(v) (over the coset g·H when coset), both in
// natural order, as gnark-crypto's fft does.
func (b *Backend) NTT(v []fr.Element, coset bool) error { return b.transform(v, false, coset) }

// INTT replaces the evaluations in v over the domain of size len(v) (over the
// coset g·H when coset) by the coefficients of their polynomial, both in
// natural order.
func (b *Backend) INTT(v []fr.Element, coset bool) error { return b.transform(v, true, coset) }

// TimeNTT measures the device alone: it uploads v once and returns the
// device times (CUDA events) of runs natural-order transforms of that
// resident vector, each transforming the previous one's result, after one
// warm-up. v is not changed. It is for benchmarks, where the inputs are
// already on the device; NTT and INTT are the calls that move data. The
// transforms go back and forth between the first two work vectors: the last
// result is in vecs[(runs+1) % 2].
func (b *Backend) TimeNTT(v []fr.Element, inverse bool, runs int) ([]time.Duration, error) {
	logN, err := logSize(len(v))
	if err != nil {
		return nil, fmt.Errorf("ntt timing: %w", err)
	}
	if runs < 1 {
		return nil, fmt.Errorf("ntt timing: %d runs, want at least 1", runs)
	}
	ts := make([]time.Duration, 0, runs)
	err = b.dev.Do(func(cx *driver.Ctx) error {
		d, err := b.loadVector(cx, logN, v)
		if err != nil {
			return err
		}
		st := b.st
		tm, err := cx.NewTimer()
		if err != nil {
			return err
		}
		for i := -1; i < runs; i++ { // i = −1 is the warm-up
			dt, err := cx.Time(tm, st.compute, func() error {
				from := (i + 1) % 2 // the warm-up reads vecs[0]
				return st.k.transform(cx, st.compute, st.vecs[1-from], st.vecs[from], d, inverse, false)
			})
			if err != nil {
				return errors.Join(err, cx.FreeTimer(tm))
			}
			if i >= 0 {
				ts = append(ts, dt)
			}
		}
		return cx.FreeTimer(tm)
	})
	if err != nil {
		return nil, fmt.Errorf("ntt timing 2^%d on GPU: %w", logN, err)
	}
	return ts, nil
}

// loadVector prepares the domain of size 2^logN and copies v into the first
// work vector, returning when the copy is done.
func (b *Backend) loadVector(cx *driver.Ctx, logN uint32, v []fr.Element) (*domain, error) {
	d, err := b.prepare(cx, logN)
	if err != nil {
		return nil, err
	}
	if err := b.st.stage.upload(cx, b.st.vecs[0], driver.Bytes(v)); err != nil {
		return nil, err
	}
	return d, b.st.stage.wait(cx)
}

func (b *Backend) transform(v []fr.Element, inverse, coset bool) error {
	logN, err := logSize(len(v))
	if err != nil {
		return fmt.Errorf("ntt: %w", err)
	}
	err = b.dev.Do(func(cx *driver.Ctx) error {
		d, err := b.loadVector(cx, logN, v)
		if err != nil {
			return err
		}
		st := b.st
		if err := st.k.transform(cx, st.compute, st.vecs[1], st.vecs[0], d, inverse, coset); err != nil {
			return err
		}
		if err := cx.SyncStream(st.compute); err != nil {
			return fmt.Errorf("ntt kernels: %w", err)
		}
		return st.stage.download(cx, driver.Bytes(v), st.vecs[1])
	})
	if err != nil {
		return fmt.Errorf("ntt 2^%d on GPU: %w", logN, err)
	}
	return nil
}
