// Package gpu implements prover/groth16's Backend on CUDA GPUs: the quotient
// polynomial h = (a·b − c)/Z through number-theoretic transforms over the
// BLS12-381 scalar field Fr, run by the kernels of cuda/kernels/ntt.cu, and
// the multi-scalar multiplications through the MSM engine of this package
// (MSM), which the Backend loads on its first MSM call.
//
// Beyond Backend, it implements the calls through which groth16.Prove keeps
// data on the device and transfers off the critical path:
// QuotientLHBackend (h never leaves the GPU; the private wires go up during
// the quotient's last transforms), BPairBackend (the B MSMs in G1 and G2
// with one upload and one sort) and Prefetcher (the A and B wires go up
// while the L‖H MSM computes). It is also a groth16.FixedBaser
// (FixedBaseG1, FixedBaseG2: batched fixed-base multiplication, kernel units
// fixed_base_g1 and fixed_base_g2), so that groth16.SetupWith computes a
// development key's points on the GPU, with the CPU setup's key bytes.
//
// Every call takes the context of the proof it serves: it stops between
// kernels and stages once that context is done (waiting for what it queued,
// so that the Backend stays usable), and reports its sub-phases to the
// groth16.Trace in it, with its record of each MSM and quotient
// (MSMTimings with the window and table shape, QuotientTimings) in
// groth16.PhaseInfo.Detail of the last sub-phase of that MSM or quotient.
package gpu
