// Package buildinfo says what a cuzk binary is: its release version and
// source commit, the Go release that built it, and its module and main
// package.
//
// A release build stamps version and commit at link time with one
// `-ldflags -X` (Ldflag), because releases build with -buildvcs=false and
// -trimpath (the same bytes from a clone or from a source tree without
// .git), so the build info holds no vcs.* settings and no -ldflags. A
// binary built another way falls back on its build info: the module
// version of `go install module@version`, or vcs.revision and
// vcs.modified of a build inside a git checkout. Get reads all of this
// once; it is safe for concurrent use.
//
// The stamp is a single string of a fixed shape, so a verifier finds it in
// a binary's bytes without running it (FromBinary): ci/release checks that
// every binary of a release names the version and commit its provenance
// names.
package buildinfo
