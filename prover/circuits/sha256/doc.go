// Package sha256 is a SHA-256 gadget (FIPS 180-4) for prover/r1cs: message
// padding, the message schedule and the compression function over
// boolean-constrained bits.
//
// Representation. A Bit is a constant, a boolean variable, or the negation
// of one (1 − v), so NOT is free and operations with constants fold away
// without constraints. A Word is 32 Bits, least significant first; rotations
// and shifts are free re-indexings.
//
// Costs per bit: XOR is one constraint, (2a)·b = a + b − c; Ch is one,
// e·(f − g) = ch − g; Maj is two, b·c = bc and a·(b + c − 2bc) = maj − bc.
// Modular addition packs the operands into one field element (no overflow:
// at most 7·2^32 ≪ p) and splits the sum into 32 result bits plus ⌈log2 k⌉
// carry bits; the most significant carry is not allocated but expressed as
// (sum − Σ lower bits)/2^j, so its booleanity constraint is also the packing
// equality: 32 + carries constraints per addition. That constraint is
// written u·u = 1 with u = 2·top − 1, one factor passed twice, so proving
// mode evaluates the long packed sum once.
//
// Speed. Gates build their linear combinations in buffers reused from one
// constraint to the next, so a compression allocates nothing per gate.
//
// One compression with a variable chaining state costs 26 232 constraints
// (64 rounds × 294 + 48 schedule words × 149 + 8 × 33 for the final
// additions). The first block of a message starts from the constant IV and
// costs 25 675; a block of constant padding only costs 19 101; a constant
// message costs nothing. Bellman's gadget spends about 27 000 per block.
package sha256
