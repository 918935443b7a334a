package testreport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"
)

// GoTest runs `go test -json` on sel in dir, passing its events to r (which
// prints them) and its stderr to stderr. The error is go test's (a failed
// test, package or build) or the stream's; r.Summary() then says what ran.
func GoTest(ctx context.Context, r *Reporter, dir string, sel Selection, timeout time.Duration, stderr io.Writer) error {
	args, err := sel.GoTestArgs(timeout)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir, cmd.Stderr = dir, stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("testreport: go test: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("testreport: start go test: %w", err)
	}
	readErr := r.Read(out)
	if readErr != nil {
		_, _ = io.Copy(io.Discard, out) // let go test finish writing before Wait closes the pipe
	}
	waitErr := cmd.Wait()
	if waitErr != nil {
		waitErr = fmt.Errorf("go test %s: %w", sel, waitErr)
	}
	return errors.Join(readErr, waitErr)
}
