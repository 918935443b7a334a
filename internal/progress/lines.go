package progress

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
)

// Writer returns a writer whose whole lines go out through t.Println (so
// that a terminal's live line never runs into them), keeping a partial
// line until its end comes: the output of a child process, say.
func (t *Ticker) Writer() *LineWriter { return &LineWriter{t: t} }

// LineWriter is Ticker.Writer's writer. It is safe for concurrent use.
type LineWriter struct {
	t       *Ticker
	mu      sync.Mutex
	partial []byte
}

func (w *LineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.t.Println(string(w.partial[:i]))
		w.partial = w.partial[i+1:]
	}
}

// Logger returns a logger whose records of level Info and above go out
// through t.Println as lines "PREFIX: MESSAGE key=value ...": a library's
// progress log, printed between the Ticker's reports.
func (t *Ticker) Logger(prefix string) *slog.Logger {
	return slog.New(lineHandler{prefix: prefix, t: t})
}

type lineHandler struct {
	prefix string
	t      *Ticker
	attrs  []slog.Attr
	group  string
}

func (h lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h lineHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(h.prefix + ": " + r.Message)
	for _, a := range h.attrs {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
	}
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", h.qualified(a.Key), a.Value)
		return true
	})
	h.t.Println(b.String())
	return nil
}

// qualified is key in the handler's group.
func (h lineHandler) qualified(key string) string {
	if h.group == "" {
		return key
	}
	return h.group + "." + key
}

func (h lineHandler) WithAttrs(as []slog.Attr) slog.Handler {
	attrs := slices.Clone(h.attrs)
	for _, a := range as {
		a.Key = h.qualified(a.Key)
		attrs = append(attrs, a)
	}
	h.attrs = attrs
	return h
}

func (h lineHandler) WithGroup(name string) slog.Handler {
	if h.group != "" {
		name = h.group + "." + name
	}
	h.group = name
	return h
}
