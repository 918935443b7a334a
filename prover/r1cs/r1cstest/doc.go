// Package r1cstest holds small reference circuits and a matrix-based
// satisfaction check, shared by the tests and benchmarks of the prover
// packages. The circuits are real (every constraint is enforced and checked);
// they are small on purpose.
package r1cstest
