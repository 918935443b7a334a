// Package groth16 implements the Groth16 zk-SNARK over BLS12-381 on top of
// prover/r1cs: keys, a development-only Setup, Prove, Verify, versioned
// binary encodings and snarkjs-compatible JSON export.
//
// The heavy math (the quotient polynomial through NTTs and the multi-scalar
// multiplications) goes through the small Backend interface declared here;
// prover/cpu implements it on gnark-crypto and is the reference that every
// other backend must match byte for byte.
//
// Prove and every Backend call take a context: cancelling it stops a proof
// at its next stage boundary (and a backend call at its next kernel or
// stage), leaving backend and Workspace usable. Timings come through a
// per-call Trace in that context (WithTrace; PhaseTimes collects and sums
// them), in the manner of net/http/httptrace, so that they stay right when
// proofs overlap: Prove reports each backend call as a Phase, backends
// report their sub-phases (prover/gpu: uploads, transforms, MSM stages,
// downloads) under the call that did the work.
//
// Construction follows Groth, "On the Size of Pairing-based Non-interactive
// Arguments" (EUROCRYPT 2016), in the form used by bellman and gnark:
// A = α + Σ w_j u_j(τ) + rδ, B = β + Σ w_j v_j(τ) + sδ,
// C = Σ_priv w_j L_j + Σ h_i τ^i Z(τ)/δ + sA + rB₁ − rsδ.
package groth16
