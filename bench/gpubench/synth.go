package gpubench

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Synthesizer solves porep-synth into one assignment reused from proof to
// proof (r1cs.WithBuffers), as a daemon's worker would. Given a host
// allocator (the GPU backend's pinned memory), the assignment's vectors come
// from it, so that the quotient's uploads of a, b, c and the wires' go by
// DMA without staging; otherwise from the Go heap, on the first solve. A
// Synthesizer serves one goroutine; each Solve overwrites the previous
// assignment.
type Synthesizer struct {
	c   *porep.Circuit
	sys *r1cs.System
	asg *r1cs.Assignment // the buffers of the next solve; nil before a heap one's first
}

// NewSynthesizer returns a Synthesizer of c (compiled as sys) whose vectors
// come from alloc (nil: the Go heap). Vectors from alloc are freed with it.
func NewSynthesizer(c *porep.Circuit, sys *r1cs.System, alloc groth16.HostAllocator) (*Synthesizer, error) {
	s := &Synthesizer{c: c, sys: sys}
	if alloc == nil {
		return s, nil
	}
	n := sys.DomainSize()
	asg := &r1cs.Assignment{}
	for _, v := range []struct {
		dst *[]fr.Element
		n   int
	}{{&asg.Public, sys.NbPublic}, {&asg.Private, sys.NbPrivate}, {&asg.A, n}, {&asg.B, n}, {&asg.C, n}} {
		var err error
		if *v.dst, _, err = groth16.AllocVector(alloc, v.n); err != nil { // freed with the backend
			return nil, fmt.Errorf("synthesis vectors: %w", err)
		}
	}
	s.asg = asg
	return s, nil
}

// Solve synthesizes the circuit into the reused buffers.
func (s *Synthesizer) Solve() (*r1cs.Assignment, error) {
	opts := []r1cs.SolveOption{r1cs.WithShape(s.sys)}
	if s.asg != nil {
		opts = append(opts, r1cs.WithBuffers(s.asg))
	}
	asg, err := r1cs.Solve(s.c, opts...)
	if err != nil {
		return nil, fmt.Errorf("synthesis: %w", err)
	}
	s.asg = asg
	return asg, nil
}
