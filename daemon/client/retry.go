package client

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// retryable reports whether err means the daemon went away (or refused
// new work while draining, or lost the job's key: keys.ErrKeyGone), so
// that the same request may go again, to this daemon or another. A retry
// sends the same request_id: the daemon returns the job while it is queued,
// running or done, and runs the request again once it has failed or been
// cancelled (docs/daemon.md), so a retry never proves twice and never
// replays an old failure. Nothing the request itself caused is retried:
// InvalidArgument, AlreadyExists, NotFound, ResourceExhausted,
// FailedPrecondition, Internal (a proof that failed) and the caller's own
// Canceled and DeadlineExceeded.
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.Aborted:
		return true
	}
	return false
}
