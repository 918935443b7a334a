package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Every is the longest a Ticker lets a step run without a line off a
// terminal: under 15 s with room to spare, so that no silence reaches 15 s.
const Every = 10 * time.Second

// Ticker reports a running step until Stop.
type Ticker struct {
	w     io.Writer
	live  bool
	every time.Duration
	start time.Time
	now   func() time.Time

	mu   sync.Mutex
	what string
	last time.Time // the last line, the Ticker's or the step's own
	done chan struct{}
	wg   sync.WaitGroup
}

// Option changes a Ticker's defaults.
type Option func(*Ticker)

// WithInterval sets the interval between lines off a terminal (default
// Every) and between rewrites on one (default one second).
func WithInterval(d time.Duration) Option { return func(t *Ticker) { t.every = d } }

// WithLive makes the Ticker rewrite one line (a terminal's way) or print
// lines, whatever w is.
func WithLive(live bool) Option { return func(t *Ticker) { t.live = live } }

// Start reports the step what on w until Stop: off a terminal, the line
// "WHAT… (10s)" after every 10 s without a line (Println's count); on a
// terminal (w is a character device), a live line with the seconds,
// rewritten every second. It prints nothing at once: the caller says what
// starts.
func Start(w io.Writer, what string, opts ...Option) *Ticker {
	t := &Ticker{w: w, live: IsTerminal(w), what: what, now: time.Now, done: make(chan struct{})}
	t.start = t.now()
	t.last = t.start
	for _, o := range opts {
		o(t)
	}
	if t.every <= 0 {
		t.every = Every
		if t.live {
			t.every = time.Second
		}
	}
	t.wg.Add(1)
	go t.run()
	return t
}

func (t *Ticker) run() {
	defer t.wg.Done()
	timer := time.NewTimer(t.every)
	defer timer.Stop()
	for {
		select {
		case <-t.done:
			return
		case <-timer.C:
		}
		t.mu.Lock()
		now := t.now()
		if quiet := now.Sub(t.last); !t.live && quiet < t.every {
			timer.Reset(t.every - quiet) // a line came meanwhile: wait from it
			t.mu.Unlock()
			continue
		}
		line := fmt.Sprintf("%s… (%s)", t.what, now.Sub(t.start).Round(time.Second))
		if t.live {
			fmt.Fprintf(t.w, "\r%s\x1b[K", line)
		} else {
			fmt.Fprintln(t.w, line)
		}
		t.last = now
		timer.Reset(t.every)
		t.mu.Unlock()
	}
}

// Set changes what the next report says is running.
func (t *Ticker) Set(what string) {
	t.mu.Lock()
	t.what = what
	t.mu.Unlock()
}

// Println prints a line of the step's own between the reports (on a
// terminal, over the live line, which the next tick draws again).
func (t *Ticker) Println(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.last = t.now()
	if t.live {
		fmt.Fprintf(t.w, "\r\x1b[K%s\n", line)
		return
	}
	fmt.Fprintln(t.w, line)
}

// Mark says that a line went out elsewhere (another stream the user
// reads): off a terminal, the silence counts from now.
func (t *Ticker) Mark() {
	t.mu.Lock()
	t.last = t.now()
	t.mu.Unlock()
}

// Stop ends the reports (clearing the live line) and returns how long the
// step ran. It may be called more than once.
func (t *Ticker) Stop() time.Duration {
	t.mu.Lock()
	select {
	case <-t.done:
	default:
		close(t.done)
	}
	t.mu.Unlock()
	t.wg.Wait()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.live {
		fmt.Fprint(t.w, "\r\x1b[K")
		t.live = false // cleared once
	}
	return t.now().Sub(t.start)
}

// IsTerminal reports whether w is a terminal: a file the terminal driver
// answers for (a character device such as /dev/null is not one), where a
// line rewritten in place is read by a person, not kept in a log.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}
