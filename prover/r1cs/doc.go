// Package r1cs is the synthesis layer of the prover: circuits describe rank-1
// constraints a·b = c over the BLS12-381 scalar field through the API
// interface, and the same circuit code runs in two modes.
//
// Shape mode (Compile) ignores values and records the constraint matrices
// A, B, C in compressed sparse row form, with coefficients interned in one
// table (8 bytes per term). Shapes are fixed per circuit kind and size, so a
// Cache keeps one System per caller-given shape key; key generation
// (prover/groth16.Setup) reads the matrices.
//
// Proving mode (Solve) computes the assignment and, for every constraint i,
// the evaluations a_i = <A_i, w>, b_i = <B_i, w>, c_i = <C_i, w> directly while
// the circuit runs, without building matrices. These vectors are what the
// quotient polynomial h = (a·b − c)/Z needs. Solve checks every constraint as it
// is enforced and reports the first unsatisfied one as an *UnsatisfiedError
// carrying its index and namespace path, so a wrong witness never becomes a
// bad proof.
//
// Variables. The full assignment is w = (1, public inputs…, private
// witnesses…), publics in the order Public was called and privates in the
// order Private was called. A Variable names one entry: One is w_0, other
// publics carry their public index, and privates carry their private index
// with the high bit (privateTag) set; System.Column maps a Variable to its
// position in w.
//
// Groth16 padding. Like bellman, both modes append one constraint
// input_k · 0 = 0 for every public input (One included) after the circuit's
// own constraints. They make the public inputs' polynomials u_k linearly
// independent, which the soundness of Groth16's verifying key needs. The
// evaluation vectors are then zero-padded to the domain size, the next power
// of two ≥ constraints + publics (DomainSize).
//
// Allocation and speed. Enforce never retains its LC arguments, so circuits
// may reuse LC buffers (lc = lc[:0].Add(...)); proving mode then performs no
// heap allocation per constraint beyond growing its flat output vectors
// (WithShape sizes them exactly, WithBuffers reuses a previous assignment's).
// Proving-mode cost is about one field multiplication per LC term whose
// coefficient is not 1, so dense combinations (an expanded linear layer) cost
// more than a fresh variable bound once and reused; Bind does that binding
// with a single evaluation of the combination. Bind and Product allocate a
// constraint's output variable in one step, without computing the value
// in the circuit and checking it again in the solver.
//
// Parallel synthesis. A circuit whose Define has independent parts (the
// challenges of a PoRep: each a label and an inclusion proof over shared
// public inputs) passes them to Parallel as Segments with their exact
// private and constraint counts. Solve (WithWorkers, default GOMAXPROCS)
// then assigns each segment the variable indices and rows a sequential run
// would give it and solves the segments concurrently into those ranges of
// the preallocated vectors, so the assignment, and the first unsatisfied
// constraint, are the same element by element for every worker count.
// Compile, and Solve with one worker, call the segments in turn: the System
// does not depend on Parallel. Every mode checks each segment against its
// declaration (ErrSegment).
package r1cs
