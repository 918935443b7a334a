package ci

import (
	"fmt"
	"slices"
	"strings"
)

// StepError is a pipeline step that failed: which step, its command, its
// exit code and the end of its standard error, whichever executor ran it.
type StepError struct {
	Pipeline string
	// Step is the step that failed; zero when none had started (the
	// container itself failed).
	Step Step
	// Exit is the step's exit code (-1 when unknown).
	Exit int
	// Stderr is the end of the step's standard error (Tail).
	Stderr string
	// Err is the executor's own error.
	Err error
}

func (e *StepError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pipeline %s: ", e.Pipeline)
	if len(e.Step.Args) > 0 {
		fmt.Fprintf(&b, "step %q (%s) failed with exit code %d", e.Step.Why, strings.Join(e.Step.Args, " "), e.Exit)
	} else {
		fmt.Fprintf(&b, "the container failed with exit code %d before any step ran", e.Exit)
	}
	if e.Stderr == "" {
		b.WriteString("; it wrote nothing to stderr")
	} else {
		fmt.Fprintf(&b, "; the end of its stderr:\n    %s", strings.ReplaceAll(strings.TrimRight(e.Stderr, "\n"), "\n", "\n    "))
	}
	b.WriteString("\n(the step ran in cuzk's build image; run the same command natively, or rerun the pipeline, to see all of its output)")
	return b.String()
}

func (e *StepError) Unwrap() error { return e.Err }

// tailLines and tailBytes bound the end of stderr a StepError carries.
const (
	tailLines = 20
	tailBytes = 4 << 10
)

// Tail returns the last lines of s: at most 20 lines and 4 KiB.
func Tail(s string) string {
	s = strings.TrimRight(s, "\n")
	if len(s) > tailBytes {
		s = s[len(s)-tailBytes:]
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
	}
	lines := strings.Split(s, "\n")
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	return strings.Join(lines, "\n")
}

// stepByArgs returns the step of steps whose command is args, or a step
// holding only args when none is.
func stepByArgs(steps []Step, args []string) Step {
	for _, s := range steps {
		if slices.Equal(s.Args, args) {
			return s
		}
	}
	return Step{Args: args}
}

// tailWriter keeps the last bytes written to it.
type tailWriter struct{ buf []byte }

func (t *tailWriter) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - 4*tailBytes; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailWriter) String() string { return Tail(string(t.buf)) }
