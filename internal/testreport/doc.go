// Package testreport reads `go test -json` and says what the run did: it
// prints a plain, readable account as the events arrive (one line per
// package with its counts, and every failing test's output in full, build
// errors and tests a timeout cut short included) and collects a Summary:
// counts, failures, and every skipped test with its reason (the skip
// message) and that reason's Class.
//
// A Class tells the skips a machine's hardware explains (no GPU; a GPU
// where a test of the no-GPU path wanted none; a GPU too small) from every
// other skip: a missing tool, a missing build, -short. Summary.CheckCI
// fails on the latter, so CI, which sets everything up, cannot pass while
// silently testing less than a developer's machine.
//
// GoTest runs `go test -json` on a Selection (the packages and -run
// regexp `go run mage.go test` takes from CUZK_TEST_PACKAGES and
// CUZK_TEST_RUN) through a Reporter; magefiles/test.go only calls it. A
// Reporter is not safe for concurrent use; a Summary is a plain value.
package testreport
