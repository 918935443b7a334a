package gpu

import (
	"time"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// workEnd marks the end of the last event-timed work a device ran (a
// quotient's last transform, an MSM's last stage), so that a chunked MSM
// can report its lead: the device's idle time from there to its own first
// stage (the first chunk's bases and scalars going up, the host between
// the calls). One per Backend, shared with its MSM engine; its methods run
// on the device thread and accept a nil receiver (an engine of its own
// keeps no mark, and reports no lead).
type workEnd struct {
	ev  *driver.Event
	set bool // ev was recorded at least once
}

// mark records the end of the work queued so far on s (nil: the default
// stream).
func (w *workEnd) mark(c *driver.Ctx, s *driver.Stream) error {
	if w == nil || w.ev == nil {
		return nil
	}
	if err := c.Record(w.ev, s); err != nil {
		return err
	}
	w.set = true
	return nil
}

// since returns the time from the last mark to e (recorded and complete),
// and whether there was a mark.
func (w *workEnd) since(c *driver.Ctx, e *driver.Event) (time.Duration, bool, error) {
	if w == nil || !w.set {
		return 0, false, nil
	}
	d, err := c.Elapsed(w.ev, e)
	return d, err == nil, err
}
