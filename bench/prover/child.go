package proverbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// child runs argv with GOMAXPROCS=procs, decodes the JSON object it prints
// on stdout into out, and returns its peak resident set size in bytes
// (0 where the platform does not report it). Its stderr is kept for the
// error when it fails.
func child(ctx context.Context, procs int, out any, argv ...string) (peakRSS int64, err error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(procs))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s: %w: %s", argv[0], err, strings.TrimSpace(lastLines(stderr.String(), 10)))
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		return 0, fmt.Errorf("%s: report: %w", argv[0], err)
	}
	return maxRSS(cmd.ProcessState), nil
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
