// Package poseidon implements the Poseidon permutation and hash over the
// BLS12-381 scalar field with the x^5 S-box, natively and as an R1CS gadget
// for prover/r1cs.
//
// Parameters follow the reference implementation by Grassi, Khovratovich,
// Rechberger, Roy and Schofnegger ("Poseidon: A New Hash Function for
// Zero-Knowledge Proof Systems", USENIX Security 2021; the hadeshash
// repository, code/generate_parameters_grain.sage and
// code/calc_round_numbers.py):
//
//   - round constants come from the Grain LFSR in self-shrinking mode, seeded
//     with (field = GF(p), S-box = x^α, n = 255, t, R_F, R_P), 255-bit
//     big-endian samples, rejecting samples ≥ p;
//   - the MDS matrix is the Cauchy matrix M[i][j] = 1/(x_i + y_j) whose 2t
//     values are drawn from the same Grain stream after the round constants;
//   - a round adds the constants, applies x^5 (to every lane in a full round,
//     to lane 0 in a partial round) and multiplies by M; R_F/2 full rounds
//     precede and follow the R_P partial rounds.
//
// Two parameter sets are provided: Width3 (t = 3, arity 2, R_F = 8, R_P = 57)
// and Width9 (t = 9, arity 8, R_F = 8, R_P = 63). Width3 is the reference's
// poseidonperm_x5_255_3 instance and reproduces its published test vector;
// Width5 (t = 5, R_P = 60, poseidonperm_x5_255_5) is provided too because its
// published vector checks the generator at a second width. See RoundNumbers
// for how R_P is derived.
//
// Hash absorbs up to t−1 field elements into lanes 1…t−1 with a domain tag in
// lane 0 (the capacity) and returns lane 1, the convention Filecoin's neptune
// uses for Merkle trees (tag 2^arity − 1 for a full node).
//
// The gadget spends 3 constraints per S-box (x·x = x2, x2·x2 = x4,
// x4·x = y) and binds every S-box input after the first round to a variable
// with one more: 4·(t·R_F + R_P) − t per permutation (321 for Width3, 531
// for Width9). Linear layers cost no constraints: they are folded into the
// bound inputs, each re-expressed through recent variables so that no
// linear combination exceeds 2t terms (see tables.go). Proving-mode cost
// follows the matrix terms more than the constraints: Width9 has 6.2 terms
// per constraint (3.4 with a coefficient other than 1) in this form, against
// 30 (28) when every linear layer was folded into 3 constraints per S-box.
package poseidon
