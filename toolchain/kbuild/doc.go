// Package kbuild is cuzk's kernel build engine. Each .cu file under the
// kernel directory is one unit. A unit's ActionID hashes everything that can
// change its fatbin: the engine version, the toolchain identity, the exact
// nvcc argument list, the target architectures and defines, and the path and
// bytes of the .cu and of every file it transitively includes (found by
// scanning #include directives against the include path, never listed by
// hand). Headers outside the project (the CUDA toolkit's, libc's) are
// covered by the toolchain identity instead.
//
// Build looks every unit up in the content-addressed store (toolchain/cas),
// then in an optional remote cache (WithRemote; a hit is written to the
// local store): a hit costs no compiler run; a miss runs nvcc, stores the
// result (and uploads it, unless the remote is read-only) and says why the
// unit was rebuilt. Keys hold the toolchain identity the engine is given
// (the pins' identity, toolchain.PinnedIdentity), so nvcc is only looked
// for, through WithCompiler, on the first miss: a build served wholly from
// the caches needs no toolkit. Outputs are then materialized into the output
// directory with a manifest (cuda/manifest's Manifest) that the Go build
// embeds. Explain reports, without building, which units are fresh and what
// changed for the stale ones. While nvcc runs, the progress writer
// (WithProgress) shows each compile's start and elapsed time (progress.go).
//
// An Engine is safe for use by one goroutine at a time; several processes
// may build the same tree and cache concurrently (per-action locks, atomic
// writes).
package kbuild
