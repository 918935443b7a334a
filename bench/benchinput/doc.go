// Package benchinput makes the large random inputs of cuzk's GPU benchmarks
// and the CPU references their results are checked against.
//
// Scalars come from seeded PCG streams, one per worker, so that 2^27 of them
// take a second, not minutes. Bases are a tile of distinct random points
// (random multiples of the generator, made by gnark-crypto) repeated to the
// size: an MSM's cost does not depend on which points repeat, only on bucket
// collisions, which random scalars keep rare. Tiling also makes every large
// MSM checkable (FoldScalars, RefG1): exact, and milliseconds even at 2^27.
// A quotient of 2^27 coefficients is checked at one random point
// (QuotientProbe) instead of against a CPU recomputation.
//
// Every function is deterministic in its seed and safe for concurrent use
// on distinct vectors; each uses all cores.
package benchinput

import "errors"

// ErrMismatch reports a result that differs from its CPU reference.
var ErrMismatch = errors.New("GPU result differs from the CPU reference")
