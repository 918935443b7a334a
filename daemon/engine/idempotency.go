package engine

import (
	"crypto/sha256"
	"fmt"
)

// sameRequest reports, as ErrRequestConflict naming the first field that
// differs, whether now is not the request old was submitted with. A
// request_id names one request: every field that changes the result or
// the work must match — the circuit (id and parameters), the input, the
// partitions, skip_verify and the priority (a job's place in the queue is
// part of what was asked; to change it, cancel and submit anew).
func sameRequest(old, now Request) error {
	type field struct {
		name      string
		was, is   any
		different bool
	}
	fields := []field{
		{"circuit.id", old.Circuit.Def.ID, now.Circuit.Def.ID, old.Circuit.Def.ID != now.Circuit.Def.ID},
		{"circuit.params", old.Circuit.Key, now.Circuit.Key, old.Circuit.Key != now.Circuit.Key},
		{"partitions", old.partitions(), now.partitions(), old.partitions() != now.partitions()},
		{"input", digest(old.Input), digest(now.Input), string(old.Input) != string(now.Input)},
		{"skip_verify", old.SkipVerify, now.SkipVerify, old.SkipVerify != now.SkipVerify},
		{"priority", old.Priority, now.Priority, old.Priority != now.Priority},
	}
	for _, f := range fields {
		if f.different {
			return fmt.Errorf("%w: request_id %q: %s differs (first %v, now %v)", ErrRequestConflict, now.RequestID, f.name, f.was, f.is)
		}
	}
	return nil
}

// retries reports whether a request_id's known job lets the same request
// run again: a job that failed or was cancelled. Its id is then given to
// the new job (the old one stays readable by its job id until it is
// forgotten); a queued, running or successful job is returned instead.
// This is what callers of idempotent APIs expect: the id guards against
// doing the work twice, not against retrying what did not succeed, and
// daemon/client's retries of Unavailable (a key gone, a daemon that shut
// down) resubmit with the same id.
func retries(old *Job) bool {
	st := old.State()
	return st == Failed || st == Cancelled
}

// digest names an input in an error without printing it: its length and
// the start of its SHA-256.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return fmt.Sprintf("%d bytes sha256:%x", len(b), sum[:6])
}
