package r1cs

import (
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
)

// segmentResult is what solving one segment left besides its values.
type segmentResult struct {
	err    error             // Define's error or a mismatch with the declaration, wrapped
	failed *UnsatisfiedError // the segment's first unsatisfied constraint
	panic  *segmentPanic
}

// segmentPanic is a segment's panic, raised again by Parallel's caller.
type segmentPanic struct {
	value any
	stack []byte
}

// solveSegments is Parallel on more than one worker. Segment i gets the
// private variables privAt[i] … privAt[i+1]−1 and the rows rowAt[i] …
// rowAt[i+1]−1, where a sequential run would put them; the vectors grow
// once to hold them all, and each worker writes its segments' ranges in
// place. Workers take segments in order, so the large early ones start first.
func (s *solver) solveSegments(segs []Segment) error {
	start := s.counts()
	privAt, rowAt := make([]int, len(segs)+1), make([]int, len(segs)+1)
	privAt[0], rowAt[0] = start.private, start.constraints
	for i := range segs {
		privAt[i+1] = privAt[i] + segs[i].Private
		rowAt[i+1] = rowAt[i] + segs[i].Constraints
	}
	end, rows := privAt[len(segs)], rowAt[len(segs)]
	s.priv = slices.Grow(s.priv, end-start.private)
	s.a = slices.Grow(s.a, rows-start.constraints)
	s.b = slices.Grow(s.b, rows-start.constraints)
	s.c = slices.Grow(s.c, rows-start.constraints)

	results := make([]segmentResult, len(segs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(s.workers, len(segs)) {
		wg.Go(func() {
			w := &solver{workers: 1, bounded: true, lcRows: s.lcRows, pub: s.pub[:len(s.pub):len(s.pub)]}
			for i := int(next.Add(1) - 1); i < len(segs); i = int(next.Add(1) - 1) {
				w.place(s, privAt[0], privAt[i], privAt[i+1], rowAt[i], rowAt[i+1])
				results[i] = w.solveSegment(i, &segs[i])
			}
		})
	}
	wg.Wait()
	s.priv, s.a, s.b, s.c = s.priv[:end], s.a[:rows], s.b[:rows], s.c[:rows]
	return s.merge(results)
}

// place points the segment solver w at its ranges of parent's vectors:
// private variables [lo, hi) and rows [rowLo, rowHi), with the variables of
// the segments before it, [first, lo), hidden.
func (w *solver) place(parent *solver, first, lo, hi, rowLo, rowHi int) {
	w.priv = parent.priv[:lo:hi]
	w.a, w.b, w.c = parent.a[:rowLo:rowHi], parent.b[:rowLo:rowHi], parent.c[:rowLo:rowHi]
	w.hidden = span{uint32(first), uint32(lo - first)}
	w.path = append(w.path[:0], parent.path...)
	w.failed, w.over, w.foreign = nil, counts{}, false
}

// solveSegment runs segment i on w, placed, and checks it as inOrder does.
// A panic is kept for the caller, unless the segment had passed its ranges
// or read a hidden variable, which explains it: that is reported as the
// mismatch.
func (w *solver) solveSegment(i int, seg *Segment) (res segmentResult) {
	before := w.counts()
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		switch {
		case w.foreign:
			res = segmentResult{err: foreignError(i)}
		case w.over != (counts{}):
			res = segmentResult{err: checkCounts(i, seg, before, w.counts())}
		default:
			res = segmentResult{panic: &segmentPanic{value: r, stack: debug.Stack()}}
		}
	}()
	if err := seg.Define(w); err != nil {
		return segmentResult{err: fmt.Errorf("segment %d: %w", i, err)}
	}
	if w.foreign {
		return segmentResult{err: foreignError(i)}
	}
	if err := checkCounts(i, seg, before, w.counts()); err != nil {
		return segmentResult{err: err}
	}
	return segmentResult{failed: w.failed}
}

// merge takes the segments' outcomes in order, as a sequential run would
// meet them: the first panic or error ends it, and the first unsatisfied
// constraint is kept unless one before the segments was.
func (s *solver) merge(results []segmentResult) error {
	for i := range results {
		r := &results[i]
		if r.panic != nil {
			panic(fmt.Sprintf("r1cs: segment %d: %v\n\nsegment goroutine stack:\n%s", i, r.panic.value, r.panic.stack))
		}
		if r.err != nil {
			return r.err
		}
		if s.failed == nil {
			s.failed = r.failed
		}
	}
	return nil
}
