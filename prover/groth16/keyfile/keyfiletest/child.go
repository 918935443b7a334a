// Package keyfiletest runs the parts of key-file tests that need another
// process: a truncate(2) from outside the test's process (a file lease is
// not broken by its holder's own descriptor), and a test's body in a child
// process of the test binary, so that a fault that ends a process (SIGBUS
// on a mapping past its file's end) fails the test with its cause instead
// of ending the test binary.
//
// A test binary that imports it runs as such a truncate when started by
// TruncateCmd: the package's init does it and exits.
package keyfiletest

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// childEnv names the test a re-executed test binary runs as the child;
// truncateEnv ("<size> <path>") makes it a truncate(2) of another process.
// (truncate(1) opens the file with O_NONBLOCK, which a lease answers with
// EAGAIN at once; truncate(2) waits, as most writers' opens do.)
const (
	childEnv    = "KEYFILETEST_CHILD"
	truncateEnv = "KEYFILETEST_TRUNCATE"
)

func init() {
	arg, ok := os.LookupEnv(truncateEnv)
	if !ok {
		return
	}
	size, path, _ := strings.Cut(arg, " ")
	n, err := strconv.ParseInt(size, 10, 64)
	if err == nil {
		err = os.Truncate(path, n)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "truncate:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TruncateCmd truncates path to size from another process.
func TruncateCmd(path string, size int64) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %s", truncateEnv, size, path))
	return cmd
}

// InChild runs the calling test in a new process of the test binary and
// reports whether this is that child, which runs the test's body. A child
// that failed or ended fails the test with its output (why: the runtime's
// fatal error and signal, failed assertions; what: ending the process is
// the failure the tests look for). A child that skipped makes the test
// skip with the child's own reason.
func InChild(t *testing.T, what string) bool {
	t.Helper()
	if os.Getenv(childEnv) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "--- SKIP") {
		t.Skip(childSkip(out))
	}
	if err != nil {
		t.Fatalf("the child process failed (%v): %s:\n%s\n...\n%s", err, what, crashLines(out), Tail(out, 3000))
	}
	t.Logf("child process:\n%s", Tail(out, 2000))
	return false
}

// childSkip is the reason a child process skipped with: its "SKIP
// (visible): …" line (so that it is classified as the child's reason),
// else its output's tail.
func childSkip(out []byte) string {
	const mark = "SKIP (visible):"
	s := string(out)
	i := strings.Index(s, mark)
	if i < 0 {
		return "SKIP (visible), in the child process:\n" + string(Tail(out, 2000))
	}
	line, _, _ := strings.Cut(s[i:], "\n")
	return line
}

// crashLines picks out of a child's output the lines that say why it
// ended (the runtime's fatal error and signal, a failed assertion).
func crashLines(out []byte) string {
	var keep []string
	for _, l := range strings.Split(string(out), "\n") {
		for _, mark := range []string{"fatal error:", "[signal ", "unexpected fault address", "Error:", "Messages:", "--- FAIL"} {
			if strings.Contains(l, mark) {
				keep = append(keep, l)
				break
			}
		}
	}
	return strings.Join(keep, "\n")
}

// Tail is the last n bytes of b (all of b when shorter).
func Tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
