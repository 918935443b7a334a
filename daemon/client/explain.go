package client

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Explain returns err, an error of a call to the daemons at addr, with a
// sentence in front that says what it means and what to do next: which
// address, which variable, which command. The gRPC code and the daemon's
// own words follow in parentheses, and the result still wraps err
// (status.Code and errors.Is see through it). An error that is no gRPC
// status, or one whose message already says enough, comes back as it is.
func Explain(err error, addr string) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	msg := st.Message()
	next := ""
	switch st.Code() {
	case codes.Unavailable:
		next = unavailable(msg, addr)
	case codes.Unauthenticated:
		if strings.Contains(msg, "missing") {
			next = fmt.Sprintf("the daemon at %s wants a bearer token: set $CUZK_DAEMON_TOKEN (or -token) to the daemon's token", addr)
		} else {
			next = fmt.Sprintf("the daemon at %s refused the token: $CUZK_DAEMON_TOKEN (or -token) must be the token the daemon was started with", addr)
		}
	case codes.PermissionDenied:
		next = fmt.Sprintf("the daemon at %s refused the call: check $CUZK_DAEMON_TOKEN (or -token)", addr)
	case codes.DeadlineExceeded:
		next = "no answer in time: raise -timeout (0: no limit), or see what the daemon is doing with \"cuzk status\""
	case codes.NotFound:
		next = fmt.Sprintf("the daemon at %s does not know this job: check the job id, and use the -addr of the daemon that took it (a restarted daemon forgets its jobs)", addr)
	case codes.ResourceExhausted:
		if strings.Contains(msg, "message larger than max") || strings.Contains(msg, "received message larger") {
			next = "a message is larger than allowed: raise -max-message here, or the daemon's max_message (cuzk-daemon serve -max-message)"
		} else {
			next = fmt.Sprintf("the daemon at %s has no room for this now: try again later, or see its queue and memory with \"cuzk status\"", addr)
		}
	case codes.InvalidArgument:
		next = "the daemon refused the request: \"cuzk circuits\" lists the circuits and the parameters each takes"
	case codes.Unimplemented:
		next = fmt.Sprintf("the daemon at %s does not offer this call: compare \"cuzk version\" with the daemon's version (\"cuzk status\")", addr)
	default:
		return err
	}
	return &explained{next: next, err: err, code: st.Code(), msg: msg}
}

// unavailable says why a daemon is unavailable, from the message gRPC or
// the daemon gave.
func unavailable(msg, addr string) string {
	switch {
	case strings.Contains(msg, "draining"), strings.Contains(msg, "shut down"):
		return fmt.Sprintf("the daemon at %s is stopping (draining): it takes no new jobs; submit to another daemon, or again once it has restarted", addr)
	case strings.Contains(msg, "connection refused"), strings.Contains(msg, "no such file"), strings.Contains(msg, "produced zero addresses"),
		strings.Contains(msg, "no such host"):
		return fmt.Sprintf("no daemon answers at %s: start one with \"cuzk-daemon serve\", or point -addr (or $CUZK_ADDR) at a running one", addr)
	case strings.Contains(msg, "EOF"), strings.Contains(msg, "connection reset"), strings.Contains(msg, "error reading from server"),
		strings.Contains(msg, "transport is closing"):
		return fmt.Sprintf("the connection to the daemon at %s closed: the daemon stopped or restarted (a job it was running is lost); \"cuzk status\" shows whether it is back", addr)
	}
	return fmt.Sprintf("the daemon at %s is unavailable: check that it runs (\"cuzk status\") and that -addr (or $CUZK_ADDR) points at it", addr)
}

// explained is an error with the sentence that explains it.
type explained struct {
	next string
	err  error
	code codes.Code
	msg  string
}

func (e *explained) Error() string { return fmt.Sprintf("%s (%s: %s)", e.next, e.code, e.msg) }
func (e *explained) Unwrap() error { return e.err }

// GRPCStatus keeps the status of the error explained, for status.Code.
func (e *explained) GRPCStatus() *status.Status {
	var s interface{ GRPCStatus() *status.Status }
	if errors.As(e.err, &s) {
		return s.GRPCStatus()
	}
	return nil
}
