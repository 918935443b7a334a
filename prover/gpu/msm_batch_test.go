package gpu

import (
	"context"
	"fmt"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// A batch of MSMs over the same bases (MSMG1Batch, MSMBBatch) equals the
// CPU backend's MSM of each vector, on fresh random inputs, over streamed
// bases (page-locked and pageable) and resident ones in chunks, with chunk
// boundaries at the edges (one point a chunk, one chunk for the whole MSM,
// a last chunk of one point) and batches of 1, 2 and 3 vectors. With no
// room for the carries beyond the first (no work vectors yet), the vectors
// run one after another, each streaming the bases again; with the work
// vectors allocated (a quotient ran), one record covers the batch and the
// bases cross once.
func TestMSMBatchMatchesCPU(t *testing.T) {
	b, ref, rng := chunkedBackend(t)
	type tc struct {
		n, chunk, nvec int
		resident, pin  bool
	}
	cases := []tc{
		{n: 7, chunk: 1, nvec: 2}, {n: 1001, chunk: 250, nvec: 3, pin: true}, {n: 1001, chunk: 1000, nvec: 2},
		{n: 4097, chunk: 1 << 10, nvec: 2, resident: true}, {n: 4096, chunk: 4096, nvec: 2, pin: true},
		{n: 1<<16 + 5, chunk: 1 << 13, nvec: 2, pin: true}, {n: 1000, chunk: 300, nvec: 1},
	}
	run := func(t *testing.T, c tc, room bool) {
		vecs := make([][]fr.Element, c.nvec)
		for i := range vecs {
			vecs[i] = randScalars(c.n, rng)
		}
		g1 := randG1(c.n, min(c.n, 64), rng)
		g2 := randG2(c.n, min(c.n, 16), rng)
		forcePlan(t, b, driver.Bytes(g1), g1, false, c.chunk, c.resident, c.pin)
		forcePlan(t, b, driver.Bytes(g2), g2, true, c.chunk, c.resident, c.pin)
		var log msmLog
		got, err := b.MSMG1Batch(log.context(), g1, vecs)
		require.NoError(t, err)
		require.Len(t, got, c.nvec)
		p1, p2, err := b.MSMBBatch(log.context(), g1, g2, vecs)
		require.NoError(t, err)
		for i, v := range vecs {
			want, err := ref.MSMG1(context.Background(), g1, clone(v))
			require.NoError(t, err)
			require.True(t, got[i].Equal(&want), "G1 batch: vector %d differs from the CPU backend's", i)
			require.True(t, p1[i].Equal(&want), "B pair batch, G1: vector %d differs", i)
			want2, err := ref.MSMG2(context.Background(), g2, clone(v))
			require.NoError(t, err)
			require.True(t, p2[i].Equal(&want2), "B pair batch, G2: vector %d differs", i)
		}
		recs := log.take()
		chunks := len(chunkRanges(c.n, c.chunk))
		batched := c.nvec > 1 && (room || chunks == 1)
		perCall := c.nvec // records a call: one per vector, or one for the batch
		if batched {
			perCall = 1
		}
		require.Len(t, recs, 3*perCall, "records of the G1 batch and of the pair's two curves")
		for i, r := range recs {
			pb := g1PointBytes
			if i >= 2*perCall {
				pb = g2PointBytes
			}
			assert.Equal(t, chunks, r.Chunks)
			if batched {
				assert.Equal(t, c.n*c.nvec, r.Points, "record %d: the whole batch", i)
			} else {
				assert.Equal(t, c.n, r.Points, "record %d: one vector", i)
			}
			if c.resident {
				assert.Zero(t, r.StreamedBytes)
			} else {
				assert.Equal(t, int64(c.n*pb), r.StreamedBytes, "record %d: the bases cross once", i)
			}
		}
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("no-room/n=%d/chunk=%d/vectors=%d/resident=%v/pinned=%v", c.n, c.chunk, c.nvec, c.resident, c.pin),
			func(t *testing.T) { run(t, c, false) })
	}
	// A quotient of 2^18 leaves three work vectors of 8 MiB: room for the
	// carries.
	const logN = 18
	a, bv, cv := randScalars(1<<logN, rng), randScalars(1<<logN, rng), randScalars(1<<logN, rng)
	_, err := b.QuotientH(context.Background(), a, bv, cv)
	require.NoError(t, err)
	for _, c := range cases {
		t.Run(fmt.Sprintf("n=%d/chunk=%d/vectors=%d/resident=%v/pinned=%v", c.n, c.chunk, c.nvec, c.resident, c.pin),
			func(t *testing.T) { run(t, c, true) })
	}
	_, err = b.MSMG1Batch(context.Background(), randG1(3, 3, rng), [][]fr.Element{randScalars(3, rng), randScalars(2, rng)})
	assert.ErrorIs(t, err, ErrMSMInput, "a vector shorter than the bases")
	_, err = b.MSMG1Batch(context.Background(), randG1(3, 3, rng), nil)
	assert.Error(t, err, "a batch of no vectors")
	_, _, err = b.MSMBBatch(context.Background(), []bls12381.G1Affine{}, []bls12381.G2Affine{}, [][]fr.Element{{}, {}})
	assert.NoError(t, err, "empty sums are the points at infinity")
}
