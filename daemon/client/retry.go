package client

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// retryable reports whether err means the daemon went away (or refused
// new work while draining), so that the same request may go to another.
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.Aborted:
		return true
	}
	return false
}
