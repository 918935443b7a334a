package r1cs

import (
	"errors"
	"fmt"
)

// Segment is one independent part of a circuit's Define, declared with the
// exact number of private variables and constraints it adds so that a
// solver can place it before it runs. Define receives the API of the
// enclosing call (or, in a parallel Solve, one of its own) and may read
// variables allocated before Parallel and its own, never another segment's;
// it allocates no public inputs. Define may run on any goroutine, once.
type Segment struct {
	Private     int // private variables Define allocates
	Constraints int // constraints Define enforces
	Define      func(api API) error
}

// ErrSegment means a segment allocated or enforced differently than it
// declared, or read a variable of another segment.
var ErrSegment = errors.New("segment does not match its declaration")

// Parallel adds segs to the circuit being defined through api, with exactly
// the variables, constraints and values that calling segs[0].Define(api),
// segs[1].Define(api), … in turn would give. In shape mode (Compile), in a
// Solve with one worker and through an API that wraps another it does just
// that. In a Solve with more workers it assigns each segment its range of
// private variables and constraint rows from the declared counts and solves
// the segments concurrently into their ranges; the assignment is the same,
// element by element, and so is the first unsatisfied constraint reported.
//
// The first failing segment in order decides the error, wrapped with its
// index: its Define's error, or ErrSegment where its counts differ from
// the declaration (checked in every mode but through a wrapping API). After
// an error the state of the definition is unspecified; Define should return
// it. A segment's panic ends a parallel Solve with a panic on the caller's
// goroutine, whose value names the segment and carries the original value
// and the segment goroutine's stack.
//
// Parallel is safe to call from any Define; the segments of one call may
// run concurrently with each other, never with the code around the call.
func Parallel(api API, segs []Segment) error {
	for i := range segs {
		if segs[i].Private < 0 || segs[i].Constraints < 0 || segs[i].Define == nil {
			return fmt.Errorf("segment %d: %w: %d private, %d constraints, Define set: %t",
				i, ErrSegment, segs[i].Private, segs[i].Constraints, segs[i].Define != nil)
		}
	}
	switch a := api.(type) {
	case *solver:
		if a.workers > 1 && len(segs) > 1 {
			return a.solveSegments(segs)
		}
		return inOrder(a, segs)
	case *shapeBuilder:
		if a.workers > 1 && len(segs) > 1 {
			return a.compileSegments(segs)
		}
		return inOrder(a, segs)
	}
	for i := range segs {
		if err := segs[i].Define(api); err != nil {
			return fmt.Errorf("segment %d: %w", i, err)
		}
	}
	return nil
}

// counts is how much a definition has allocated and enforced so far.
type counts struct{ public, private, constraints int }

// segmentAPI is implemented by the APIs of this package, which check the
// segments they run.
type segmentAPI interface {
	API
	counts() counts
	// isolation is the range of private variables whose reads fail the
	// running segment; setIsolation replaces it.
	isolation() span
	setIsolation(h span)
	// takeForeign reports whether an isolated variable was read since the
	// last call.
	takeForeign() bool
}

func (s *shapeBuilder) counts() counts {
	return counts{s.nbPublic, s.nbPrivate, s.a.rows}
}

// Shape mode reads no values, so there is nothing to isolate.
func (s *shapeBuilder) isolation() span    { return span{} }
func (s *shapeBuilder) setIsolation(span)  {}
func (s *shapeBuilder) takeForeign() bool  { return false }
func (s *solver) isolation() span          { return s.hidden }
func (s *solver) setIsolation(h span)      { s.hidden = h }
func (s *solver) takeForeign() (read bool) { read, s.foreign = s.foreign, false; return read }

func (s *solver) counts() counts {
	return counts{len(s.pub) + s.over.public, len(s.priv) + s.over.private, len(s.a) + s.over.constraints}
}

// inOrder runs segs one after another through api, checking each one's
// counts against its declaration and, unless an enclosing Parallel does,
// that it reads no variable of an earlier segment.
func inOrder(api segmentAPI, segs []Segment) error {
	outer := api.isolation()
	own := outer.n == 0
	defer api.setIsolation(outer)
	base := api.counts().private
	for i := range segs {
		before := api.counts()
		if own {
			api.setIsolation(span{uint32(base), uint32(before.private - base)})
		}
		if err := segs[i].Define(api); err != nil {
			return fmt.Errorf("segment %d: %w", i, err)
		}
		if own && api.takeForeign() {
			return foreignError(i)
		}
		if err := checkCounts(i, &segs[i], before, api.counts()); err != nil {
			return err
		}
	}
	return nil
}

func foreignError(i int) error {
	return fmt.Errorf("segment %d: %w: it read a variable of an earlier segment", i, ErrSegment)
}

// checkCounts compares what segment i added between before and after with
// its declaration.
func checkCounts(i int, seg *Segment, before, after counts) error {
	got := counts{after.public - before.public, after.private - before.private,
		after.constraints - before.constraints}
	if got == (counts{0, seg.Private, seg.Constraints}) {
		return nil
	}
	return fmt.Errorf("segment %d: %w: added %d public, %d private, %d constraints; declared 0, %d, %d",
		i, ErrSegment, got.public, got.private, got.constraints, seg.Private, seg.Constraints)
}
