// Package proverbench compares cuzk's CPU Groth16 prover with gnark v0.14's on
// porep-synth (prover/circuits/porep) and prints one table: synthesis rate
// (constraints/s of r1cs.Solve on one worker, so one core), Prove split by phase
// (quotient H, each MSM), peak memory, gnark's solve and prove times on the
// same circuit, and PASS/MISS against the targets (synthesis ≥ 2.5 M
// constraints/s/core; cuzk ≤ 1.0× gnark's time).
//
// Each size runs as two child processes, one after the other, with the same
// GOMAXPROCS: cuzk's side (MeasureOurs, through OursMain) and gnark's side
// (the program of the nested module bench/gnark, built by Run with the go
// command, so gnark never enters this module's dependency graph). Peak
// memory is each child's ru_maxrss.
//
// Equivalence. cuzk's side exports the circuit it proves (WriteCircuit: the
// constraint matrices and the full assignment), and gnark builds the same
// R1CS from it, row for row and term for term. Both provers therefore
// compute the quotient over the same domain and the MSMs over the same
// points' counts and the same scalars. gnark's solver computes the wires a
// gnark frontend circuit would compute (one multiplication output per
// constraint) and is given the rest (bits and hint-like values, which a
// gnark circuit computes in hints), so its solve time is a lower bound of a
// native gnark circuit's; cuzk's synthesis computes every wire. The
// comparison of synthesis + prove is therefore conservative for cuzk.
//
// Keys are cached on disk on both sides (cuzk's through prover/groth16/
// devkeys, shared with cuzk-bench), each named by a hash of the circuit's
// shape (so a circuit change never reuses a stale key), so a second run
// skips both setups. The development setup is NOT for production.
//
// gnark sizes its MSM task split by runtime.NumCPU, not GOMAXPROCS; with
// fewer procs than CPUs it oversubscribes them, so compare at procs = CPUs.
//
// Run is not safe to run concurrently with other heavy work on the same
// machine: both sides use every core they are given.
package proverbench
