package gpu

import (
	"fmt"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/internal/testseed"
)

// The table shapes newMSMTable picks: copies cover the windows, the point
// index and bucket memory stay in bounds, and one copy is the plain plan.
func TestMSMTableShapes(t *testing.T) {
	for _, n := range []int{1, 2, 3, 255, 1 << 10, 1<<16 + 1, 1 << 20, 1 << 24, 1 << 26, msmMaxPoints} {
		for _, most := range []uint32{1, 2, 3, 5, 12, msmMaxCopies} {
			tab, err := newMSMTable(n, most, 0)
			require.NoError(t, err, "n=%d, %d copies", n, most)
			nwin := ceilDiv32(256, tab.c)
			require.LessOrEqual(t, tab.copies, most, "n=%d", n)
			require.GreaterOrEqual(t, tab.copies*tab.mwin, nwin, "n=%d: copies cover the windows", n)
			require.Less(t, (tab.copies-1)*tab.mwin, nwin, "n=%d: no unused copy", n)
			require.LessOrEqual(t, uint64(tab.copies)*uint64(n), uint64(msmMaxIndex), "n=%d: 31-bit index", n)
			require.LessOrEqual(t, uint64(tab.mwin)<<(tab.c-1), uint64(msmMaxSegments), "n=%d: buckets", n)
			p, err := newMSMPlanTable(n, tab, 0, 50688)
			require.NoError(t, err)
			require.Equal(t, tab.copies, p.copies())
			if most == 1 {
				plain, err := newMSMPlan(n, 50688)
				require.NoError(t, err)
				require.Equal(t, plain, p, "n=%d: one copy is the plain plan", n)
			}
		}
	}
	// The shapes the H200 benchmarks run (docs/perf-msm.md).
	for _, tc := range []struct {
		n               int
		c, mwin, copies uint32
	}{{1 << 20, 19, 1, 14}, {1 << 24, 22, 1, 12}, {1 << 26, 24, 1, 11}} {
		tab, err := newMSMTable(tc.n, msmMaxCopies, 0)
		require.NoError(t, err)
		require.Equal(t, msmTable{c: tc.c, mwin: tc.mwin, copies: tc.copies, stride: uint32(tc.n)}, tab)
	}
	_, err := newMSMTable(1000, 0, 0)
	require.Error(t, err, "no copies")
	_, err = newMSMTable(1000, msmMaxCopies+1, 0)
	require.Error(t, err, "more copies than the kernel holds")
	_, err = newMSMPlanTable(1001, msmTable{c: 8, mwin: 4, copies: 8, stride: 1000}, 0, 1)
	require.Error(t, err, "more points than the table")
	require.Equal(t, uint32(1), maxCopies(1000, 96, 0))
	require.Equal(t, uint32(3), maxCopies(1000, 96, 2*96000+95999))
	require.Equal(t, uint32(msmMaxCopies), maxCopies(1000, 96, 1<<40))
}

// withTables gives the test's uploads on the shared engine a table budget,
// and drops it and the tables afterwards.
func withTables(t *testing.T, m *MSM) {
	require.NoError(t, m.SetTableMemory(1<<40))
	t.Cleanup(func() {
		require.NoError(t, m.SetTableMemory(0))
		require.NoError(t, m.EvictBases())
	})
}

// requireCopies checks that the MSM of record tm read a table.
func requireCopies(t *testing.T, tm MSMTimings, what string) {
	t.Helper()
	require.Greater(t, tm.Copies, 1, "%s: the MSM read a table", what)
}

// MSMs over tables of multiples, built on the GPU, against gnark-crypto on
// fresh random inputs, 1 … 2^16+1 points (2^22 without -short, bases
// repeating 2^16 random points).
func TestMSMTablesMatchGnark(t *testing.T) {
	m := testMSM(t)
	withTables(t, m)
	seed := testseed.Seed(t)
	rng := newTestRand(seed)
	sizes := msmSizes(msmTestKs()...)
	if !testing.Short() {
		sizes = append(sizes, 1<<22)
	}
	for _, n := range sizes {
		what := fmt.Sprintf("G1 n=%d", n)
		requireCopies(t, requireG1(t, m, randG1(n, 1<<16, rng), randScalars(n, rng), what), what)
		require.NoError(t, m.EvictBases())
	}
	for _, n := range msmSizes(msmTestKs()[:len(msmTestKs())-1]...) {
		what := fmt.Sprintf("G2 n=%d", n)
		requireCopies(t, requireG2(t, m, randG2(n, n, rng), randScalars(n, rng), what), what)
		require.NoError(t, m.EvictBases())
	}
}

// Edge inputs over tables: zero, one, −1, small and sparse scalars; bases at
// infinity, repeated and negated; MSMs over a prefix of a resident table
// and over rewritten bases.
func TestMSMTablesEdgeInputs(t *testing.T) {
	m := testMSM(t)
	withTables(t, m)
	seed := testseed.Seed(t)
	rng := newTestRand(seed)
	for _, sk := range []string{"random", "zero", "one", "minus-one", "small", "sparse"} {
		for _, bk := range []string{"random", "infinity", "repeated", "negated"} {
			for _, n := range []int{1, 3, 1000, 5000} {
				what := fmt.Sprintf("scalars %s, bases %s, n=%d", sk, bk, n)
				requireCopies(t, requireG1(t, m, edgeBases(bk, randG1(n, n, rng)), edgeScalars(sk, n, rng), what), what)
				require.NoError(t, m.EvictBases())
			}
		}
		bases := randG2(1000, 1000, rng)
		bases[500], bases[999] = bls12381.G2Affine{}, bases[0]
		requireCopies(t, requireG2(t, m, bases, edgeScalars(sk, 1000, rng), "G2 scalars "+sk), "G2 scalars "+sk)
		require.NoError(t, m.EvictBases())
	}
	const n = 6000
	bases := randG1(n, n, rng)
	requireG1(t, m, bases, randScalars(n, rng), "table upload")
	requireCopies(t, requireG1(t, m, bases[:n/3], randScalars(n/3, rng), "prefix of a resident table"), "prefix of a resident table")
	copy(bases, randG1(n, n, rng))
	requireG1(t, m, bases, randScalars(n, rng), "rewritten bases")
}
