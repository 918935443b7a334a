// Package gpu implements prover/groth16's Backend on CUDA GPUs: the quotient
// polynomial h = (a·b − c)/Z through number-theoretic transforms over the
// BLS12-381 scalar field Fr, run by the kernels of cuda/kernels/ntt.cu, and
// the multi-scalar multiplications through the MSM engine of this package
// (MSM), which the Backend loads on its first MSM call.
package gpu
