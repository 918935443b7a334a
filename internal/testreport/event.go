package testreport

import (
	"regexp"
	"strings"
	"time"
)

// Event is one line of `go test -json` (cmd/test2json's TestEvent, with the
// build events go test adds: build-output and build-fail carry ImportPath).
type Event struct {
	Time        time.Time
	Action      string
	Package     string
	Test        string
	Elapsed     float64 // seconds
	Output      string
	ImportPath  string
	FailedBuild string
}

// logStart matches the first line of a t.Log/t.Skip message as go test
// prints it: indented, then file:line, then the message.
var logStart = regexp.MustCompile(`^( +)[^ :]+\.go:\d+: (.*)$`)

// lastLog follows a test's output and keeps its last logged message, which
// for a skipped test is the skip message (t.Skip logs, then stops the test).
type lastLog struct {
	lines  []string // the message, one entry per line
	indent int      // the first line's indentation; continuations add 4
	open   bool     // the next indented line may continue the message
}

// add feeds one output line, without its newline.
func (l *lastLog) add(line string) {
	if strings.HasPrefix(line, "=== ") || strings.HasPrefix(strings.TrimLeft(line, " "), "--- ") {
		return // framing (RUN, PAUSE, CONT, the result line) neither starts nor ends a message
	}
	if m := logStart.FindStringSubmatch(line); m != nil {
		l.lines, l.indent, l.open = []string{m[2]}, len(m[1]), true
		return
	}
	cont := strings.Repeat(" ", l.indent+4)
	if l.open && strings.HasPrefix(line, cont) {
		l.lines = append(l.lines, strings.TrimPrefix(line, cont))
		return
	}
	l.open = false // a line the test printed itself ends the message
}

// message returns the last logged message, or noMessage.
func (l *lastLog) message() string {
	if len(l.lines) == 0 {
		return noMessage
	}
	return strings.Join(l.lines, "\n")
}
