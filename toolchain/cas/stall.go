package cas

import (
	"errors"
	"io"
	"sync/atomic"
	"time"
)

// errStalled reports a body that sent no bytes for longer than the pause
// bound.
var errStalled = errors.New("body stalled")

// readStalling reads at most limit bytes from r. If no byte arrives for
// pause, it calls cancel (which must abort the read) and returns errStalled.
// A body that keeps arriving, however slowly overall, is read to the end.
func readStalling(r io.Reader, limit int64, pause time.Duration, cancel func()) ([]byte, error) {
	var stalled atomic.Bool
	timer := time.AfterFunc(pause, func() { stalled.Store(true); cancel() })
	defer timer.Stop()
	var buf []byte
	chunk := make([]byte, 64<<10)
	lr := io.LimitReader(r, limit)
	for {
		n, err := lr.Read(chunk)
		if n > 0 {
			timer.Reset(pause)
			buf = append(buf, chunk[:n]...)
		}
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			if stalled.Load() {
				return buf, errStalled
			}
			return buf, err
		}
	}
}
