// Package hygiene holds the repository's own checks on what is tracked in
// git: sources only (no executable binaries, no file over 1 MiB beyond an
// explicit list of test fixtures), and no raw run log under docs/runs that
// no docs/perf*.md table cites. It has no non-test code.
package hygiene
