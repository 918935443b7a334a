package r1cs_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
	"github.com/cuzk-dev/cuzk/prover/r1cs/r1cstest"
)

// segmented is a head of one public and two private variables, then one
// segment per entry of lens under the namespace "body" (segment k a chain
// of lens[k] steps from head variable k%2, under "seg<k>"), then a public
// holding the sum of the chains' ends. flat calls the segments in turn
// instead of through Parallel. nested splits every chain into two
// independent halves, the second from the other head variable, each its
// own segment of a Parallel inside segment k (or, flat, called in turn).
type segmented struct {
	lens   []int
	flat   bool
	nested bool
	wrong  map[int]bool                            // segments whose second step holds a wrong value
	hook   func(api r1cs.API, k int) error         // runs first in every segment
	adjust func(k int, seg *r1cs.Segment)          // changes the declarations
	ends   []r1cs.Variable                         // each segment's last variable, set while defining
	_      func(api r1cs.API, k int) r1cs.Variable // keeps the struct comparable by nothing
}

func (c *segmented) Define(api r1cs.API) error {
	in := api.Public(fr.NewElement(3))
	head := [2]r1cs.Variable{api.Private(fr.NewElement(5)), api.Private(fr.NewElement(7))}
	api.Enforce(r1cs.V(head[0]), r1cs.V(r1cs.One), r1cs.ConstUint64(5))
	api.Enforce(r1cs.V(head[1]), r1cs.V(r1cs.One), r1cs.V(in).AddLC(r1cs.ConstUint64(4)))
	c.ends = make([]r1cs.Variable, len(c.lens))
	segs := make([]r1cs.Segment, len(c.lens))
	for k, n := range c.lens {
		segs[k] = r1cs.Segment{Private: 2 * n, Constraints: 2 * n, Define: func(api r1cs.API) error {
			return c.segment(api, k, head[k%2], 0, n)
		}}
		if c.nested {
			segs[k].Define = func(api r1cs.API) error { return c.halves(api, k, head, n) }
		}
		if c.adjust != nil {
			c.adjust(k, &segs[k])
		}
	}
	pop := api.Namespace("body")
	if err := c.run(api, segs); err != nil {
		return err
	}
	pop()
	var sum r1cs.LC
	for _, v := range c.ends {
		sum = sum.Add(v)
	}
	out := api.Public(api.Eval(sum))
	api.Enforce(sum, r1cs.V(r1cs.One), r1cs.V(out))
	return nil
}

func (c *segmented) run(api r1cs.API, segs []r1cs.Segment) error {
	if !c.flat {
		return r1cs.Parallel(api, segs)
	}
	for _, s := range segs {
		if err := s.Define(api); err != nil {
			return err
		}
	}
	return nil
}

// halves defines chain k as two segments, the steps [0, n/2) from head[k%2]
// and [n/2, n) from the other; the second's end is the chain's.
func (c *segmented) halves(api r1cs.API, k int, head [2]r1cs.Variable, n int) error {
	h := n / 2
	return c.run(api, []r1cs.Segment{
		{Private: 2 * h, Constraints: 2 * h, Define: func(api r1cs.API) error {
			return c.segment(api, k, head[k%2], 0, h)
		}},
		{Private: 2 * (n - h), Constraints: 2 * (n - h), Define: func(api r1cs.API) error {
			return c.segment(api, k, head[(k+1)%2], h, n)
		}},
	})
}

// segment defines steps [from, to) of chain k, starting at x, and records
// the chain's end.
func (c *segmented) segment(api r1cs.API, k int, x r1cs.Variable, from, to int) error {
	defer api.Namespace(fmt.Sprintf("seg%d", k))()
	if c.hook != nil && from == 0 {
		if err := c.hook(api, k); err != nil {
			return err
		}
	}
	for i := from; i < to; i++ {
		step := r1cs.V(x).AddLC(r1cs.ConstUint64(uint64(k + 1 + i)))
		b := r1cs.Bind(api, step)
		v := api.Eval(r1cs.V(b))
		v.Mul(&v, &v)
		if c.wrong[k] && i == 1 {
			v.SetUint64(1)
		}
		x = api.Private(v)
		api.Enforce(r1cs.V(b), r1cs.V(b), r1cs.V(x))
	}
	c.ends[k] = x
	return nil
}

// segmentLens has chains of awkward lengths, an empty one included.
var segmentLens = []int{5, 1, 0, 17, 3, 40, 2, 9, 1, 26, 8}

func solveSegmented(t *testing.T, c *segmented, workers int) (*r1cs.Assignment, error) {
	t.Helper()
	return r1cs.Solve(c, r1cs.WithWorkers(workers))
}

func TestParallelEqualsSequential(t *testing.T) {
	for _, nested := range []bool{false, true} {
		t.Run(fmt.Sprintf("nested=%t", nested), func(t *testing.T) {
			flatSys, err := r1cs.Compile(&segmented{lens: segmentLens, flat: true, nested: nested})
			require.NoError(t, err)
			sys, err := r1cs.Compile(&segmented{lens: segmentLens, nested: nested})
			require.NoError(t, err)
			require.Equal(t, flatSys, sys, "the shape does not depend on Parallel")

			want, err := r1cs.Solve(&segmented{lens: segmentLens, flat: true, nested: nested}, r1cs.WithShape(sys))
			require.NoError(t, err)
			require.NoError(t, r1cstest.CheckAgainstMatrices(sys, want))
			for _, workers := range []int{1, 2, 3, 7, 64} {
				got, err := r1cs.Solve(&segmented{lens: segmentLens, nested: nested},
					r1cs.WithShape(sys), r1cs.WithWorkers(workers))
				require.NoError(t, err, "%d workers", workers)
				assert.Equal(t, want, got, "%d workers", workers)
			}
			// Without a shape the vectors grow at the fork instead, apart
			// (no Wires).
			got, err := solveSegmented(t, &segmented{lens: segmentLens, nested: nested}, 4)
			require.NoError(t, err)
			assert.Nil(t, got.Wires)
			apart := *want
			apart.Wires = nil
			assert.Equal(t, &apart, got)
		})
	}
}

func TestParallelReportsFirstUnsatisfied(t *testing.T) {
	for _, wrong := range []map[int]bool{{3: true}, {9: true, 5: true}, {0: true, 10: true}} {
		flat := &segmented{lens: segmentLens, flat: true, wrong: wrong}
		_, err := r1cs.Solve(flat)
		var want *r1cs.UnsatisfiedError
		require.ErrorAs(t, err, &want)
		first := 99
		for k := range wrong {
			first = min(first, k)
		}
		assert.Equal(t, fmt.Sprintf("body/seg%d", first), want.Path)
		for _, workers := range []int{1, 2, 5} {
			_, err := solveSegmented(t, &segmented{lens: segmentLens, wrong: wrong}, workers)
			var got *r1cs.UnsatisfiedError
			require.ErrorAs(t, err, &got, "%d workers", workers)
			assert.Equal(t, want, got, "%d workers", workers)
		}
	}
}

// mismatches are segments that break their declaration; every mode must
// report ErrSegment for the first of them.
func TestParallelChecksDeclarations(t *testing.T) {
	cases := map[string]*segmented{
		"one private too many declared": {adjust: func(k int, s *r1cs.Segment) {
			if k == 3 {
				s.Private++
			}
		}},
		"one private too few declared": {adjust: func(k int, s *r1cs.Segment) {
			if k == 5 {
				s.Private--
			}
		}},
		"one constraint too few declared": {adjust: func(k int, s *r1cs.Segment) {
			if k == 9 {
				s.Constraints--
			}
		}},
		"negative count": {adjust: func(k int, s *r1cs.Segment) {
			if k == 1 {
				s.Private = -2
			}
		}},
		"public input": {hook: func(api r1cs.API, k int) error {
			if k == 4 {
				api.Public(fr.NewElement(1))
			}
			return nil
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			c.lens = segmentLens
			_, err := r1cs.Compile(c)
			require.ErrorIs(t, err, r1cs.ErrSegment, "compile")
			for _, workers := range []int{1, 3} {
				_, err := solveSegmented(t, c, workers)
				require.ErrorIs(t, err, r1cs.ErrSegment, "%d workers", workers)
			}
		})
	}
}

func TestParallelRejectsReadsOfOtherSegments(t *testing.T) {
	// Segment 0's first variable is private 2, after the head's two.
	c := &segmented{lens: segmentLens, hook: func(api r1cs.API, k int) error {
		if k == 4 {
			api.Value(r1cs.Variable(1<<31 | 2))
		}
		return nil
	}}
	for _, workers := range []int{1, 2, 4} {
		_, err := solveSegmented(t, c, workers)
		require.ErrorIs(t, err, r1cs.ErrSegment, "%d workers", workers)
		assert.ErrorContains(t, err, "segment 4: ")
		assert.ErrorContains(t, err, "earlier segment")
	}
	// Shape mode reads no values, so it cannot see the read.
	_, err := r1cs.Compile(c)
	assert.NoError(t, err)
}

func TestParallelErrorsAndPanics(t *testing.T) {
	c := &segmented{lens: segmentLens, hook: func(_ r1cs.API, k int) error {
		if k == 6 || k == 8 {
			return fmt.Errorf("hook %d", k)
		}
		return nil
	}}
	_, err := r1cs.Compile(c)
	require.ErrorContains(t, err, "segment 6: hook 6")
	for _, workers := range []int{1, 3} {
		_, err := solveSegmented(t, c, workers)
		assert.ErrorContains(t, err, "segment 6: hook 6", "%d workers", workers)
	}

	boom := errors.New("boom")
	p := &segmented{lens: segmentLens, hook: func(_ r1cs.API, k int) error {
		if k == 7 {
			panic(boom)
		}
		return nil
	}}
	assert.PanicsWithError(t, boom.Error(), func() { _, _ = solveSegmented(t, p, 1) })
	assert.Panics(t, func() { _, _ = solveSegmented(t, p, 3) })
	func() {
		defer func() {
			assert.Contains(t, fmt.Sprint(recover()), "segment 7: boom", "raised again on the caller")
		}()
		_, _ = solveSegmented(t, p, 3)
	}()

	_, err = r1cs.Solve(c, r1cs.WithWorkers(0))
	assert.ErrorContains(t, err, "WithWorkers")
}

// TestParallelRunsConcurrently has two segments that each wait for the
// other to start: only a Solve that runs them at the same time finishes
// both in time.
func TestParallelRunsConcurrently(t *testing.T) {
	var started sync.WaitGroup
	started.Add(2)
	met := make(chan struct{})
	go func() { started.Wait(); close(met) }()
	c := &segmented{lens: []int{3, 4}, hook: func(r1cs.API, int) error {
		started.Done()
		select {
		case <-met:
			return nil
		case <-time.After(10 * time.Second):
			return errors.New("the other segment did not start within 10 s")
		}
	}}
	_, err := solveSegmented(t, c, 2)
	require.NoError(t, err)
}

// TestCompileWorkersGiveOneSystem compiles the segmented circuit (whose
// segments intern coefficients of their own, in different orders) on one
// goroutine, on several, and with the segments called in turn: one System,
// matrices and coefficient ids included.
func TestCompileWorkersGiveOneSystem(t *testing.T) {
	for _, nested := range []bool{false, true} {
		flat, err := r1cs.CompileWorkers(&segmented{lens: segmentLens, flat: true, nested: nested}, 1)
		require.NoError(t, err)
		for _, workers := range []int{1, 2, 3, 8} {
			got, err := r1cs.CompileWorkers(&segmented{lens: segmentLens, nested: nested}, workers)
			require.NoError(t, err)
			assert.Equal(t, flat, got, "nested=%t, %d workers", nested, workers)
		}
	}
}

func TestCompileWorkersReportTheFirstFailingSegment(t *testing.T) {
	c := &segmented{lens: segmentLens, adjust: func(k int, s *r1cs.Segment) {
		if k == 5 || k == 9 {
			s.Constraints--
		}
	}}
	_, err := r1cs.CompileWorkers(c, 3)
	require.ErrorIs(t, err, r1cs.ErrSegment)
	assert.ErrorContains(t, err, "segment 5: ")

	h := &segmented{lens: segmentLens, hook: func(_ r1cs.API, k int) error {
		if k == 6 || k == 8 {
			return fmt.Errorf("hook %d", k)
		}
		return nil
	}}
	_, err = r1cs.CompileWorkers(h, 4)
	assert.ErrorContains(t, err, "segment 6: hook 6")

	p := &segmented{lens: segmentLens, hook: func(_ r1cs.API, k int) error {
		if k == 7 {
			panic("boom")
		}
		return nil
	}}
	func() {
		defer func() {
			assert.Contains(t, fmt.Sprint(recover()), "segment 7: boom", "raised again on the caller")
		}()
		_, _ = r1cs.CompileWorkers(p, 3)
	}()
}
