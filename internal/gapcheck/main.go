// Command gapcheck runs a command and reports the longest silence between
// its lines of output (stdout and stderr together; a carriage return ends
// a line too, as a terminal's live line redraws), so that a target or a
// client command that leaves its user without news for too long is found:
//
//	go run ./internal/gapcheck -max 15s -- go run mage.go bench:daemon
//	go run ./internal/gapcheck -- bin/cuzk prove -n 1
//
// It passes the command's output through, then prints one line: the
// longest silence, where it ended, the wall time and the exit status. It
// exits 1 when the longest silence is over -max (or the command failed), 2
// on a bad command line.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

func main() {
	fs := flag.NewFlagSet("gapcheck", flag.ContinueOnError)
	maxGap := fs.Duration("max", 15*time.Second, "the longest silence allowed")
	if err := fs.Parse(os.Args[1:]); err != nil || fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: gapcheck [-max 15s] -- COMMAND [ARGS...]")
		os.Exit(2)
	}
	r, err := Run(context.Background(), fs.Args(), os.Stdout)
	fmt.Fprintln(os.Stderr, r.Summary(*maxGap))
	if err != nil || r.Longest > *maxGap {
		os.Exit(1)
	}
}

// Result is what Run saw.
type Result struct {
	// Longest is the longest time without output: from the start to the
	// first line, between two lines, or from the last line to the end.
	Longest time.Duration
	// After is the line that ended the longest silence ("" for the end).
	After string
	// Lines counts the lines; Wall is the command's run time.
	Lines int
	Wall  time.Duration
	// Exit is the command's exit status (-1 when it did not run).
	Exit int
}

// Summary is the line gapcheck prints.
func (r Result) Summary(maxGap time.Duration) string {
	verdict := "ok"
	if r.Longest > maxGap {
		verdict = "TOO LONG (max " + maxGap.String() + ")"
	}
	where := "before the end"
	if r.After != "" {
		where = fmt.Sprintf("before %q", truncate(r.After, 80))
	}
	return fmt.Sprintf("gapcheck: longest silence %s %s: %s; %d lines in %s, exit status %d",
		r.Longest.Round(100*time.Millisecond), where, verdict, r.Lines, r.Wall.Round(100*time.Millisecond), r.Exit)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Run runs args with stdout and stderr merged into one pipe, copies what
// it prints to echo, and measures the silences between its lines.
func Run(ctx context.Context, args []string, echo io.Writer) (Result, error) {
	return run(ctx, args, echo, time.Now)
}

func run(ctx context.Context, args []string, echo io.Writer, now func() time.Time) (Result, error) {
	r := Result{Exit: -1}
	pr, pw, err := os.Pipe()
	if err != nil {
		return r, err
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = pw, pw
	start := now()
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return r, err
	}
	pw.Close() // the child holds its copy
	last, line := start, []byte{}
	buf := make([]byte, 32<<10)
	for {
		n, rerr := pr.Read(buf)
		t := now()
		for _, b := range buf[:n] {
			if b != '\n' && b != '\r' {
				line = append(line, b)
				continue
			}
			if gap := t.Sub(last); gap > r.Longest {
				r.Longest, r.After = gap, string(line)
			}
			if len(line) > 0 || b == '\n' {
				r.Lines++
			}
			last, line = t, line[:0]
		}
		if _, err := echo.Write(buf[:n]); err != nil {
			return r, err
		}
		if rerr != nil {
			break
		}
	}
	pr.Close()
	err = cmd.Wait()
	end := now()
	r.Wall = end.Sub(start)
	if gap := end.Sub(last); gap > r.Longest {
		r.Longest, r.After = gap, ""
	}
	r.Exit = cmd.ProcessState.ExitCode()
	return r, err
}
