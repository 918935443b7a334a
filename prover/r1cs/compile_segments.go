package r1cs

import (
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// compiledSegment is one segment compiled on its own builder.
type compiledSegment struct {
	b     *shapeBuilder
	err   error
	panic *segmentPanic
}

// compileSegments is Parallel in shape mode on more than one worker. Each
// segment is compiled on a builder of its own whose private variables start
// where a sequential run would put them, with a coefficient table of its
// own; the merge then appends the segments' rows in order, mapping each
// segment's coefficients to the shared table in the order they first
// appear in it, which is the order a sequential run interns them in. So the
// System is the one Compile with one worker gives.
func (s *shapeBuilder) compileSegments(segs []Segment) error {
	privAt := make([]int, len(segs)+1)
	privAt[0] = s.nbPrivate
	for i := range segs {
		privAt[i+1] = privAt[i] + segs[i].Private
	}
	out := make([]compiledSegment, len(segs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(s.workers, len(segs)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(segs); i = int(next.Add(1) - 1) {
				out[i] = compileSegment(s, i, &segs[i], privAt[i])
			}
		})
	}
	wg.Wait()
	for i := range out {
		if p := out[i].panic; p != nil {
			panic(fmt.Sprintf("r1cs: segment %d: %v\n\nsegment goroutine stack:\n%s", i, p.value, p.stack))
		}
		if out[i].err != nil {
			return out[i].err
		}
		s.absorb(out[i].b)
		out[i].b = nil // its chunks now belong to s
	}
	return nil
}

// compileSegment compiles segment i on a fresh builder whose private
// variables start at firstPrivate, checking its counts as inOrder does.
func compileSegment(parent *shapeBuilder, i int, seg *Segment, firstPrivate int) (res compiledSegment) {
	w := &shapeBuilder{workers: 1, nbPublic: parent.nbPublic, nbPrivate: firstPrivate}
	w.coeffs.id(parent.coeffs.values[0]) // id 0 is 1, as in every table
	w.path = append(w.path, parent.path...)
	defer func() {
		if r := recover(); r != nil {
			res = compiledSegment{panic: &segmentPanic{value: r, stack: debug.Stack()}}
		}
	}()
	before := w.counts()
	if err := seg.Define(w); err != nil {
		return compiledSegment{err: fmt.Errorf("segment %d: %w", i, err)}
	}
	if err := checkCounts(i, seg, before, w.counts()); err != nil {
		return compiledSegment{err: err}
	}
	return compiledSegment{b: w}
}

// absorb appends w's rows to s, w's coefficient ids mapped to s's table.
func (s *shapeBuilder) absorb(w *shapeBuilder) {
	ids := make([]uint32, len(w.coeffs.values))
	for local, c := range w.coeffs.values {
		ids[local] = s.coeffs.id(c)
	}
	for _, m := range []struct{ dst, src *matrixBuilder }{{&s.a, &w.a}, {&s.b, &w.b}, {&s.c, &w.c}} {
		m.dst.absorb(m.src, ids)
	}
	s.nbPrivate = w.nbPrivate
}

// absorb appends src's rows to m, its coefficient ids mapped through ids;
// src's chunks are taken over, not copied (its row ends shifted in place).
func (m *matrixBuilder) absorb(src *matrixBuilder, ids []uint32) {
	base := uint32(m.n)
	for _, ends := range src.ends {
		for j := range ends {
			ends[j] += base
		}
	}
	m.ends = append(m.ends, src.ends...)
	m.rows += src.rows
	for k := range src.ids {
		chunk := src.ids[k]
		for j, id := range chunk {
			chunk[j] = ids[id]
		}
	}
	m.cols = append(m.cols, src.cols...)
	m.ids = append(m.ids, src.ids...)
	m.n += src.n
}
