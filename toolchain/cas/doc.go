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
// Every file is written through internal/renameio (a temporary in the same
// directory, fsynced, renamed into place, directory fsynced), so a reader
// sees either nothing or a complete file, across processes and crashes. Every
// read re-hashes the blob; an entry whose blob is missing or damaged is
// removed and reported as ErrNotFound, so the caller rebuilds it. Lock
// serializes builders of one action across processes (flock), so two
// concurrent builds of the same kernel run the compiler once.
//
// Remote is the same cache on a server that speaks the Bazel HTTP remote
// cache protocol (<base>/ac/<action>, <base>/cas/<output>): bazel-remote,
// BuildBuddy, an nginx WebDAV location. Store and Remote share the small
// Cache interface; ReadOnly wraps either so that Put sends and writes
// nothing. Nothing a Remote downloads is returned unverified: a wrong
// digest, a short body or a missing blob is ErrNotFound matching
// ErrCorrupt, and a server that cannot answer is ErrUnavailable.
//
// The package uses only the standard library (and internal/renameio, the
// module's one atomic-write helper, itself standard-library only).
package cas
