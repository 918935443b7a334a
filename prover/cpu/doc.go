// Package cpu implements the Groth16 prover's math Backend on gnark-crypto:
// NTTs with precomputed twiddles (fr/fft) for the quotient polynomial and
// parallel bucket multi-scalar multiplication (MultiExp) for G1 and G2.
// It is the reference every other backend is checked against, so it favors
// gnark-crypto's well-tested paths over cleverness.
package cpu
