package kbuild

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	prog "github.com/cuzk-dev/cuzk/internal/progress"
)

// Progress intervals: a terminal's status line is redrawn every second; a
// log (stdout not a terminal) gets a plain line every 15 s.
const (
	ttyRefresh              = time.Second
	DefaultProgressInterval = 15 * time.Second
)

// WithProgressInterval sets how often, where the progress writer is not a
// terminal, a plain line lists the compiles in flight with their elapsed
// time (default DefaultProgressInterval).
func WithProgressInterval(d time.Duration) Option {
	return func(e *Engine) error {
		if d <= 0 {
			return fmt.Errorf("kbuild: progress interval %s <= 0", d)
		}
		e.tickEvery = d
		return nil
	}
}

// progress writes an Engine's lines: one per unit's outcome, one when an
// nvcc run starts (`compiling msm_g1 (3/12)…`: the third run to start in a
// build of twelve kernels) and, while runs are in flight, their elapsed
// time. On a terminal the elapsed times share one status line rewritten in
// place (`compiling msm_g1 (3/12) 1m20s, msm_g2 (4/12) 55s…`); elsewhere
// that line is printed as a plain line every interval. Lines from
// concurrent units never mix. It is safe for concurrent use.
type progress struct {
	w     io.Writer
	tty   bool
	every time.Duration
	now   func() time.Time
	// ticker returns a channel that ticks every d and its stop function.
	ticker func(d time.Duration) (<-chan time.Time, func())

	mu      sync.Mutex
	total   int           // units in the build
	started int           // nvcc runs started in the build
	running []*compileRun // in start order
	shown   bool          // a status line is on the terminal
	stop    func()        // stops the ticking goroutine; nil when none runs
}

type compileRun struct {
	name  string
	n     int
	start time.Time
}

func newProgress(w io.Writer, every time.Duration) *progress {
	return &progress{w: w, tty: prog.IsTerminal(w), every: every, now: time.Now, ticker: realTicker}
}

func realTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// reset starts a build of total units.
func (p *progress) reset(total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total, p.started = total, 0
}

// begin notes that nvcc started compiling name and returns the function
// that notes its end.
func (p *progress) begin(name string) (end func()) {
	p.mu.Lock()
	p.started++
	r := &compileRun{name: name, n: p.started, start: p.now()}
	p.running = append(p.running, r)
	p.writeLocked(fmt.Sprintf("compiling %s (%d/%d)…\n", name, r.n, p.total))
	if p.stop == nil {
		p.stop = p.startTicker()
	}
	p.mu.Unlock()
	return func() { p.end(r) }
}

func (p *progress) end(r *compileRun) {
	p.mu.Lock()
	for i, x := range p.running {
		if x == r {
			p.running = append(p.running[:i], p.running[i+1:]...)
			break
		}
	}
	var stop func()
	if len(p.running) == 0 {
		stop, p.stop = p.stop, nil
	}
	p.writeLocked("")
	p.mu.Unlock()
	if stop != nil {
		stop() // outside the lock: the goroutine may be waiting for it in tick
	}
}

// startTicker starts the goroutine that calls tick until the returned
// function is called; that function returns once the goroutine has exited.
func (p *progress) startTicker() func() {
	every := p.every
	if p.tty {
		every = ttyRefresh
	}
	c, stopTicker := p.ticker(every)
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		for {
			select {
			case <-c:
				p.tick()
			case <-done:
				return
			}
		}
	}()
	return func() {
		stopTicker()
		close(done)
		<-exited
	}
}

// tick shows the runs in flight with their elapsed time: the terminal's
// status line is redrawn; a log gets a plain line.
func (p *progress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.running) == 0 {
		return
	}
	if p.tty {
		p.writeLocked("")
		return
	}
	_, _ = fmt.Fprintln(p.w, p.statusLocked()) // advisory, as in writeLocked
}

// printf writes one line between the status line's redraws.
func (p *progress) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writeLocked(fmt.Sprintf(format, args...))
}

// writeLocked writes s; on a terminal it first erases the status line and
// then redraws it below s while runs are in flight.
func (p *progress) writeLocked(s string) {
	if !p.tty {
		_, _ = io.WriteString(p.w, s) // progress is advisory: a closed terminal must not fail a build
		return
	}
	var b strings.Builder
	if p.shown {
		b.WriteString("\r\x1b[K")
	}
	b.WriteString(s)
	p.shown = len(p.running) > 0
	if p.shown {
		b.WriteString(p.statusLocked())
	}
	_, _ = io.WriteString(p.w, b.String()) // advisory, as above
}

// statusLocked lists the runs in flight: `compiling a (1/3) 20s, b (2/3) 5s…`.
func (p *progress) statusLocked() string {
	now := p.now()
	parts := make([]string, len(p.running))
	for i, r := range p.running {
		parts[i] = fmt.Sprintf("%s (%d/%d) %s", r.name, r.n, p.total, now.Sub(r.start).Round(time.Second))
	}
	return "compiling " + strings.Join(parts, ", ") + "…"
}
