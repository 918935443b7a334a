// Package devkeys caches DEVELOPMENT Groth16 keys on disk: keys made by
// groth16.Setup from a seeded, publicly known trapdoor, for tests and
// benchmarks only. Anyone who knows the seed can forge proofs for such a
// key, so a key from this package must never be used in production; a
// production key comes from a multi-party ceremony and is loaded as it is.
//
// Get returns the key pair of a compiled circuit: from the cache directory
// when a matching file is there, otherwise from a fresh development setup
// that is then written for the next run. A file name carries the circuit's
// name, the setup seed and ShapeID, a hash of the compiled matrices, so a
// key made before a circuit change is never taken for the new circuit. A
// damaged or mismatched file is a miss and is replaced; writes go through a
// temporary file and a rename, so no process ever reads half a key.
//
// With WithRawFile, Get also writes the proving key as a raw key file
// (prover/groth16/keyfile) beside the pair, and Mapped opens that file by
// mmap without decoding; WithRawFileOnly writes the raw key file in place
// of the .pk.
//
// Rand is the deterministic byte stream behind the setup (stream 0); callers
// use its other streams for reproducible proof blinding.
package devkeys
