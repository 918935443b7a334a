// Package buildbench measures cuzk's kernel build engine (toolchain/kbuild)
// against ninja on the same tree, nvcc command by nvcc command.
//
// Run copies a tree's kernel sources twice into a work directory. One copy
// is built by kbuild with a fresh cache; the other by ninja from a generated
// build.ninja whose commands are kbuild's own nvcc argument lists plus
// `-MD -MF` and `deps = gcc`, so ninja tracks headers as well as it can.
// Both copies go through one scripted sequence of edits (cold build, no-op,
// header edit, revert, a branch switch A→B→A, a flag change, touching every
// source); for each step Run counts the nvcc runs of each side through a
// logging wrapper around the real compiler and times each build.
//
// The minimum for a step is computed independently of both builders: a unit
// must compile only if its command line and the bytes of the project files
// nvcc says it read (ninja's dependency log) form a state never built before.
// A content-addressed builder can reach that bound; a timestamp-based one
// cannot, because reverting, switching back and touching look like changes.
//
// EngineNoOp and MageNoOp time the no-op paths that developers pay on every
// build. Nothing here is safe for concurrent use, and every function writes
// only under the work directory it is given.
package buildbench
