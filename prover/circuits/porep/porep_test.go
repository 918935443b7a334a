package porep

import (
	"fmt"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/bench/benchinput"
	"github.com/cuzk-dev/cuzk/prover/circuits/internal/circuittest"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

func TestPlanFitsTarget(t *testing.T) {
	for _, shape := range Shapes {
		t.Run(shape.String(), func(t *testing.T) { testPlanFitsTarget(t, shape) })
	}
}

func testPlanFitsTarget(t *testing.T, shape Shape) {
	for log := 10; log <= 27; log++ {
		target := 1 << log
		l, err := shape.Plan(target)
		require.NoError(t, err, "2^%d", log)
		assert.LessOrEqual(t, l.Rows(), target, "2^%d", log)
		fill := float64(l.Rows()) / float64(target)
		// The smallest column hash (width 3) takes 321 rows: 2^10 has room
		// for one proof, comm_r and 144 rows that no hash fits, and 2^11
		// for 618 rows, which one width-9 hash fills to within 87.
		minFill := 0.99
		switch log {
		case 10:
			minFill = 0.85
		case 11:
			minFill = 0.95
		}
		assert.GreaterOrEqual(t, fill, minFill, "2^%d: %+v", log, l)
		assert.Positive(t, l.Challenges)
		if log >= 17 {
			assert.Positive(t, l.Labelled, "2^%d labels", log)
		}
		if log >= 20 {
			// The rest of the bit-heavy witness TestBitShare measures.
			share := float64(l.Labelled*(labelCost(shape)+challengeCost(l.Depth)+1)) / float64(target)
			assert.InDelta(t, labelShare, share, 0.03, "2^%d: labelled rows", log)
		}
		t.Logf("2^%d: depth %d, %d challenges (%d labelled), fill %v, rows %d (%.4f)",
			log, l.Depth, l.Challenges, l.Labelled, l.Fill, l.Rows(), fill)
	}
	if shape != Synth {
		return
	}
	// The smallest target with a label, which TestShapeAndSequentialSolveUnchanged pins.
	l, err := Plan(115113)
	require.NoError(t, err)
	assert.Equal(t, 1, l.Labelled)
	l, err = Plan(115113 - 1)
	require.NoError(t, err)
	assert.Zero(t, l.Labelled)
	_, err = Plan(MinTarget - 1)
	assert.Error(t, err)
	_, err = Plan(MaxTarget + 1)
	assert.Error(t, err)
}

// TestBitShare checks that from 2^20 on the witness is bit-heavy as a PoRep
// C2 partition's is: 88–93 % of the wires (public and private) are 0 or 1,
// almost all of them in the SHA-256 labels.
func TestBitShare(t *testing.T) {
	if testing.Short() {
		t.Skip("solves 2^20 and 2^21")
	}
	for _, shape := range Shapes {
		for _, log := range []int{20, 21} {
			c, err := shape.New(1<<log, 1)
			require.NoError(t, err)
			asg, err := r1cs.Solve(c)
			require.NoError(t, err)
			w := benchinput.CountWires(asg.Public, asg.Private)
			share := float64(w.Zero+w.One) / float64(w.Zero+w.One+w.Other)
			assert.GreaterOrEqual(t, share, 0.88, "%s 2^%d: %v", shape, log, w)
			assert.LessOrEqual(t, share, 0.93, "%s 2^%d: %v", shape, log, w)
			t.Logf("%s 2^%d: %d labelled of %d challenges; %v", shape, log, c.Layout.Labelled, c.Layout.Challenges, w)
		}
	}
}

func TestCircuit(t *testing.T) {
	logs := []int{10, 12, 14, 17}
	if testing.Short() {
		logs = []int{10, 12}
	}
	for _, shape := range Shapes {
		for _, log := range logs {
			t.Run(fmt.Sprintf("%s/2^%d", shape, log), func(t *testing.T) { testCircuit(t, shape, log) })
		}
	}
}

func testCircuit(t *testing.T, shape Shape, log int) {
	c, err := shape.New(1<<log, int64(log))
	require.NoError(t, err)
	sys, err := r1cs.Compile(c)
	require.NoError(t, err)
	assert.Equal(t, c.Layout.Constraints(), sys.NbConstraints)
	assert.Equal(t, c.Layout.Publics(), sys.NbPublic)
	assert.Equal(t, 1<<log, sys.DomainSize())

	asg, err := r1cs.Solve(c, r1cs.WithShape(sys))
	require.NoError(t, err)
	assert.Equal(t, c.PublicInputs(), asg.PublicInputs())

	requireTamperingFails(t, c, sys.NbPrivate)
}

func requireTamperingFails(t *testing.T, c *Circuit, nbPrivate int) {
	bad := *c
	bad.CommR.SetUint64(3)
	_, err := r1cs.Solve(&bad)
	circuittest.RequireUnsatisfied(t, err, "comm_r")

	bad = *c
	bad.Challenges = append([]uint64(nil), c.Challenges...)
	bad.Challenges[0] ^= 1
	_, err = r1cs.Solve(&bad)
	circuittest.RequireUnsatisfied(t, err, "challenge0")

	for _, target := range []int{nbPrivate / 3, nbPrivate / 2, nbPrivate - 1} {
		_, err = r1cs.Solve(&circuittest.Tampered{Inner: c, Target: target})
		circuittest.RequireUnsatisfied(t, err, "")
	}
}

func TestDeterministic(t *testing.T) {
	a, err := New(1<<12, 7)
	require.NoError(t, err)
	b, err := New(1<<12, 7)
	require.NoError(t, err)
	assert.Equal(t, a.PublicInputs(), b.PublicInputs())
	c, err := New(1<<12, 8)
	require.NoError(t, err)
	assert.NotEqual(t, a.PublicInputs(), c.PublicInputs())
}

// BenchmarkSynthesis solves porep-synth sequentially (workers=1) and on
// every core (workers=GOMAXPROCS), reporting constraints/s in total and per
// core used, min(workers, GOMAXPROCS), and per second of the process's CPU
// time (garbage collection included), which a machine shared with other
// work does not distort.
func BenchmarkSynthesis(b *testing.B) {
	cores := runtime.GOMAXPROCS(0)
	for _, log := range []int{12, 14, 16, 18, 20} {
		c, err := New(1<<log, 1)
		require.NoError(b, err)
		sys, err := r1cs.Compile(c)
		require.NoError(b, err)
		for _, workers := range slices.Compact([]int{1, cores}) {
			b.Run(fmt.Sprintf("2^%d/workers=%d", log, workers), func(b *testing.B) {
				asg, err := r1cs.Solve(c, r1cs.WithShape(sys)) // the vectors, reused
				require.NoError(b, err)
				cpu0 := cpuTime(b)
				for b.Loop() {
					if asg, err = r1cs.Solve(c, r1cs.WithShape(sys), r1cs.WithBuffers(asg), r1cs.WithWorkers(workers)); err != nil {
						b.Fatal(err)
					}
				}
				cpu := cpuTime(b) - cpu0
				perSec := float64(sys.NbConstraints) * float64(b.N) / b.Elapsed().Seconds()
				b.ReportMetric(float64(sys.NbConstraints)*float64(b.N)/cpu.Seconds(), "constraints/cpu-s")
				b.ReportMetric(float64(sys.NbConstraints), "constraints")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(sys.NbConstraints), "ns/constraint")
				b.ReportMetric(perSec, "constraints/s")
				b.ReportMetric(perSec/float64(min(workers, cores)), "constraints/s/core")
			})
		}
	}
}

// cpuTime is the process's user and system time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestProveVerify(t *testing.T) {
	c, err := New(1<<12, 9)
	require.NoError(t, err)
	circuittest.ProveAndVerify(t, c)
}

// The C2 shape's labels start at 115113 rows as Synth's do (one more
// constraint per addition moves it a little); 2^17 holds one.
func TestC2ProveVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("a labelled porep-c2 needs a 2^17 setup; skipped in -short mode")
	}
	c, err := C2.New(1<<17, 10)
	require.NoError(t, err)
	require.Positive(t, c.Layout.Labelled)
	circuittest.ProveAndVerify(t, c)
}
