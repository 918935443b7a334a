// Package selftest checks cuzk's field kernels on a GPU against
// gnark-crypto, the CPU reference.
//
// Run loads each fr_* kernel from the fatbins embedded in package cuda, runs
// it on fresh random Fr elements (led by the edge values 0, 1, r−1 and the
// raw limb patterns 1 and r−1 in every combination) and compares every
// output element with the same operation in gnark-crypto's fr package. The
// daemon runs it at start and reports the result; tests and benchmarks run it
// on the lent GPU.
//
// Where there is no driver or GPU, Run returns an error matching
// driver.ErrNoGPU (no driver, or no device); where the binary embeds no
// kernels, cuda.ErrNoKernels. Callers test these with errors.Is.
package selftest
