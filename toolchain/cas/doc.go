// Package cas is cuzk's content-addressed build cache: an ActionID (a hash of
// everything that went into a build step) names an entry, and the entry lists
// OutputIDs (hashes of the bytes that came out) naming blobs.
//
// Layout under the cache directory:
//
//	a/<xx>/<action-hex>   entry (JSON): outputs, input lines, creation time
//	o/<xx>/<output-hex>   blob: the output bytes
//	r/<xx>/<ref-hex>      named reference → action id (e.g. a kernel's last build)
//	locks/                per-action lock files
//	stats.json            hit/miss counters
//
// Every file is written to a temporary name and renamed into place, so a
// reader sees either nothing or a complete file, across processes. Every
// read re-hashes the blob; an entry whose blob is missing or damaged is
// removed and reported as ErrNotFound, so the caller rebuilds it. Lock
// serializes builders of one action across processes (flock), so two
// concurrent builds of the same kernel run the compiler once.
//
// The package uses only the standard library.
package cas
