package kbuild

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// fakeTicker records the tickers progress starts and stops; the test
// delivers ticks on c by hand.
type fakeTicker struct {
	c       chan time.Time
	every   []time.Duration
	stopped int
}

func (f *fakeTicker) start(d time.Duration) (<-chan time.Time, func()) {
	f.every = append(f.every, d)
	return f.c, func() { f.stopped++ }
}

// lockedBuffer is a buffer safe to read while the ticking goroutine writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	l.b.Reset()
	return s
}

func newTestProgress(tty bool) (*progress, *lockedBuffer, *fakeClock, *fakeTicker) {
	var out lockedBuffer
	clk := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	tk := &fakeTicker{c: make(chan time.Time)}
	p := newProgress(&out, 15*time.Second)
	p.tty, p.now, p.ticker = tty, clk.now, tk.start
	return p, &out, clk, tk
}

func TestProgressPlainListsEveryCompileInFlight(t *testing.T) {
	p, out, clk, tk := newTestProgress(false)
	p.reset(12)

	endA := p.begin("msm_g1")
	clk.advance(20 * time.Second)
	endB := p.begin("msm_g2")
	assert.Equal(t, "compiling msm_g1 (1/12)…\ncompiling msm_g2 (2/12)…\n", out.take())
	assert.Equal(t, []time.Duration{15 * time.Second}, tk.every, "one ticker for all compiles in flight")

	clk.advance(60 * time.Second)
	p.tick()
	assert.Equal(t, "compiling msm_g1 (1/12) 1m20s, msm_g2 (2/12) 1m0s…\n", out.take())

	endA()
	p.printf("kernel %s built\n", "msm_g1")
	clk.advance(15 * time.Second)
	p.tick()
	assert.Equal(t, "kernel msm_g1 built\ncompiling msm_g2 (2/12) 1m15s…\n", out.take())
	assert.Zero(t, tk.stopped, "a compile is still in flight")

	endB()
	assert.Equal(t, 1, tk.stopped, "the ticker stops with the last compile")
	p.tick() // a tick already delivered when the last compile ended prints nothing
	assert.Empty(t, out.take())

	p.begin("ntt")()
	assert.Equal(t, "compiling ntt (3/12)…\n", out.take(), "numbering goes on within a build")
	assert.Len(t, tk.every, 2, "a new ticker for the next compile")
	p.reset(12)
	p.begin("ntt")()
	assert.Equal(t, "compiling ntt (1/12)…\n", out.take(), "a new build numbers from 1")
}

func TestProgressTerminalRewritesOneStatusLine(t *testing.T) {
	p, out, clk, tk := newTestProgress(true)
	p.reset(3)
	const erase = "\r\x1b[K"

	endA := p.begin("a")
	assert.Equal(t, "compiling a (1/3)…\ncompiling a (1/3) 0s…", out.take())
	assert.Equal(t, []time.Duration{time.Second}, tk.every, "a terminal's status line is redrawn every second")

	clk.advance(80 * time.Second)
	p.tick()
	assert.Equal(t, erase+"compiling a (1/3) 1m20s…", out.take())

	endB := p.begin("b")
	assert.Equal(t, erase+"compiling b (2/3)…\ncompiling a (1/3) 1m20s, b (2/3) 0s…", out.take())

	endA()
	assert.Equal(t, erase+"compiling b (2/3) 0s…", out.take())
	p.printf("kernel a built\n")
	assert.Equal(t, erase+"kernel a built\ncompiling b (2/3) 0s…", out.take(), "lines go above the status line")

	endB()
	assert.Equal(t, erase, out.take(), "the status line is erased when nothing compiles")
	p.printf("kernel b built\n")
	assert.Equal(t, "kernel b built\n", out.take())
}

func TestProgressTickerGoroutineTicksUntilTheLastCompileEnds(t *testing.T) {
	p, out, clk, tk := newTestProgress(false)
	p.reset(1)
	end := p.begin("a")
	out.take()
	clk.advance(31 * time.Second)
	tk.c <- clk.t
	tk.c <- clk.t // received only once the first tick has been written
	assert.True(t, strings.HasPrefix(out.take(), "compiling a (1/1) 31s…\n"))
	end() // returns once the goroutine has exited
	assert.Equal(t, 1, tk.stopped)
	select {
	case tk.c <- clk.t:
		t.Fatal("a tick was received after the last compile ended")
	default:
	}
}

func TestProgressIntervalValidates(t *testing.T) {
	e := &Engine{}
	require.Error(t, WithProgressInterval(0)(e))
	require.NoError(t, WithProgressInterval(time.Minute)(e))
	assert.Equal(t, time.Minute, e.tickEvery)
}
