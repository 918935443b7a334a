package progress

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer the ticker's goroutine and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLinesOffATerminal(t *testing.T) {
	var out syncBuffer
	tk := Start(&out, "building", WithInterval(20*time.Millisecond))
	require.Eventually(t, func() bool { return strings.Count(out.String(), "\n") >= 2 }, 5*time.Second, 5*time.Millisecond)
	tk.Set("linking")
	tk.Println("built one")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "linking… (") }, 5*time.Second, 5*time.Millisecond)
	took := tk.Stop()
	assert.Positive(t, took)
	tk.Stop() // twice is fine
	s := out.String()
	assert.True(t, strings.HasPrefix(s, "building… ("), s)
	assert.Contains(t, s, "\nbuilt one\n")
	assert.NotContains(t, s, "\r", "no terminal control off a terminal")
	after := out.String()
	time.Sleep(60 * time.Millisecond)
	assert.Equal(t, after, out.String(), "nothing after Stop")
}

func TestLiveLineOnATerminal(t *testing.T) {
	var out syncBuffer
	tk := Start(&out, "compiling", WithLive(true), WithInterval(10*time.Millisecond))
	require.Eventually(t, func() bool { return strings.Count(out.String(), "\r") >= 2 }, 5*time.Second, 5*time.Millisecond)
	tk.Println("kernel done")
	tk.Stop()
	s := out.String()
	assert.NotContains(t, strings.ReplaceAll(s, "kernel done\n", ""), "\n", "one live line, no new lines but the step's own")
	assert.Contains(t, s, "\r\x1b[Kkernel done\n", "a line of the step's own clears the live line first")
	assert.True(t, strings.HasSuffix(s, "\r\x1b[K"), "Stop clears the live line: %q", s)
}

func TestDefaultInterval(t *testing.T) {
	tk := Start(&bytes.Buffer{}, "x")
	defer tk.Stop()
	assert.Equal(t, Every, tk.every)
	assert.False(t, tk.live)
	assert.False(t, IsTerminal(&bytes.Buffer{}))
	f, err := os.CreateTemp(t.TempDir(), "out")
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, IsTerminal(f), "a file is no terminal")
}

// TestALineOfTheStepsOwnCounts: off a terminal the report comes after a
// whole interval without any line, the step's own included.
func TestALineOfTheStepsOwnCounts(t *testing.T) {
	var out syncBuffer
	tk := Start(&out, "waiting", WithInterval(150*time.Millisecond))
	for range 6 {
		time.Sleep(50 * time.Millisecond)
		tk.Println("news")
	}
	assert.NotContains(t, out.String(), "waiting", "lines every 50 ms leave the ticker nothing to say")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "waiting… (") }, 5*time.Second, 10*time.Millisecond)
	tk.Stop()
}

// IsTerminal answers for the terminal driver, not for any character
// device: /dev/null is one, and a line rewritten there would be lost.
func TestIsTerminal(t *testing.T) {
	assert.False(t, IsTerminal(&bytes.Buffer{}))
	f, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, IsTerminal(f), "/dev/null is a character device but not a terminal")
}
