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
// downloads) under the call that did the work, and their own record of
// each piece of work (prover/gpu: an MSM's window and table shape) in
// PhaseInfo.Detail of its last sub-phase. It is the one trace of a proof:
// a backend has none of its own.
//
// # Prove's paths
//
// Prove picks how it computes the quotient and the four MSM sums (A, B₁, B₂,
// L‖H) by the interfaces its Backend implements; each row adds to the one
// above it. prover/cpu is a plain Backend; prover/gpu implements all five.
//
//	backend implements                   what Prove does (phases as Trace names them)
//	-----------------------------------  -------------------------------------------------------------
//	Backend                              "host vectors" (the wire vector public‖private‖h and its A and
//	                                     B compactions), then "quotient" (QuotientH, h copied to the
//	                                     host buffer), then "msm L‖H" (one MSMG1 for a key with L and H
//	                                     adjacent, two otherwise), "msm A" and "msm B1" concurrently,
//	                                     then "msm B2" (MSMG2) alone
//	QuotientLHBackend, with the key's    fused: one MSMQuotientLH call, "quotient and msm L‖H", in
//	L and H adjacent (Setup, ReadFrom)   place of QuotientH and the L‖H MSM; h never reaches the host,
//	                                     so the host buffer holds only the wires (asg's own wire vector
//	                                     when it has one); the fused call runs beside "msm A" and
//	                                     "msm B1". A key with L and H apart takes the plain path
//	Prefetcher, and fused                Prefetch(A wires, B wires) before the fused call, which then
//	                                     runs first, alone; the A and B MSMs follow it. A failed or
//	                                     cancelled run drops the announcement (a Prefetch of nothing).
//	                                     Not used without the fused call
//	ReadyPrefetcher, and fused           the A and B compactions leave "host vectors" and run beside
//	                                     the fused call ("host compactions"); PrefetchReady announces
//	                                     their vectors with a channel closed when they are written, and
//	                                     the A and B MSMs wait for it
//	BPairBackend (any of the above)      "msm B pair": one MSMB call for B₁ and B₂, concurrent with the
//	                                     other G1 MSMs, in place of "msm B1" and the later "msm B2"
//
// Every path gives the same proof, byte for byte, for the same inputs and
// randomness: fused_test.go and overlap_test.go check each against the plain
// path, with prover/cpu wrapped to offer the capability.
//
// Construction follows Groth, "On the Size of Pairing-based Non-interactive
// Arguments" (EUROCRYPT 2016), in the form used by bellman and gnark:
// A = α + Σ w_j u_j(τ) + rδ, B = β + Σ w_j v_j(τ) + sδ,
// C = Σ_priv w_j L_j + Σ h_i τ^i Z(τ)/δ + sA + rB₁ − rsδ.
package groth16
