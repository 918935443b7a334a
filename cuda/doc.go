// Package cuda holds cuzk's CUDA sources (include/, kernels/) and exposes the
// device fatbins that the kernel engine materialized into fatbin/ at build
// time, together with their manifest.
//
// The fatbins are embedded into every binary that imports this package, so a
// daemon always carries the exact kernels its manifest describes. A tree where
// `go run mage.go kernels` has not run yet still compiles: Manifest then
// returns ErrNoKernels, and GPU code reports that plainly instead of running
// stale or missing kernels.
package cuda
