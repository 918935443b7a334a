// Package merkle builds Poseidon Merkle trees over the BLS12-381 scalar field
// and proves inclusion in R1CS.
//
// A tree has arity A = T − 1 of its Poseidon parameters (2 for
// poseidon.Width3, 8 for poseidon.Width9) and a fixed depth; a node is
// poseidon Hash of its A children (domain tag 2^A − 1). Trees are sparse:
// leaves never set are zero, and untouched subtrees are represented by
// per-level default hashes, so a tree of 8^10 leaves with a few thousand set
// costs only the hashes on their paths.
//
// The inclusion gadget allocates the siblings and the leaf index digits
// (k = log2 A boolean bits per level) as private witnesses, binds the running
// node to a variable, places it among the siblings with selector products,
// and hashes upward. Per level it costs the binding, k bit constraints,
// A − k − 1 selector products, 2A − 3 placement products and one Poseidon
// permutation: 3A − 3 + params.Constraints(), that is 324 constraints for
// A = 2 and 552 for A = 8 (LevelConstraints). It
// returns the computed root and the packed index, which callers bind to
// public inputs.
//
// Leaves may be SHA-256 digests: TruncatedSHA256 maps a digest to a field
// element as Filecoin does (little-endian, the two most significant bits
// cleared), and its gadget form runs the sha256 package's gadget.
package merkle
