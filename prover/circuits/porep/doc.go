// Package porep provides porep-synth, a synthetic circuit shaped like a
// Filecoin PoRep (SDR) commitment proof and sized by a target constraint
// count, for benchmarking the prover at 2^10 … 2^27 constraints.
//
// Statement. Public inputs are the replica id, comm_r and the challenged
// node indices. The prover knows an 8-ary Poseidon tree (poseidon.Width9) of
// depth D with root comm_r_last, and comm_c, such that
// comm_r = Poseidon_3(comm_c, comm_r_last), every challenged node is a leaf
// of that tree at its public index, and for the first Labelled challenges
// the leaf is the node's label: as in SDR, SHA-256(replica_id ‖ node as 8
// bytes little-endian ‖ the labels of its Parents parents) truncated to 254
// bits, computed in the circuit from the public replica id and challenge and
// the parents' labels, private 32-byte values (four SHA-256 blocks in all,
// about 106k constraints). comm_c is the end of a chain of "column" Poseidon
// hashes over private values, which also serves as fine-grained filler to
// approach the target size.
//
// Sizing (Plan). D grows with the target, (log2 T − 7)/2 clamped to 1…10
// (8^10 = 2^30 leaves, a 32 GiB sector's node count). Labelled challenges
// take the nearest whole number to 94 % of the budget, unlabelled inclusion
// proofs the rest, and the column chain, mixing widths 9, 5 and 3 (531, 395
// and 321 constraints), fills what is left, so that constraints plus
// public-input rows stay within T and, from 2^11 on, within a few percent of
// it (at 2^10 the 144 rows left after one proof and comm_r hold no hash).
// Labels start at 115113 rows; below, the circuit is Poseidon alone. Every
// wire of a label is a bit, so from 2^20 on about 90 % of the witness is 0
// or 1, as in a real PoRep C2 partition, whose witness is mostly SHA-256.
// Everything, witness included, is derived from the seed.
package porep
