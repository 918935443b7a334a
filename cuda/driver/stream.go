package driver

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"time"
)

// Stream is an ordered queue of device work. A nil *Stream is the default
// stream.
type Stream struct{ h C.CUstream }

func (s *Stream) handle() C.CUstream {
	if s == nil {
		return nil
	}
	return s.h
}

// NewStream creates a stream that does not synchronize with the default
// stream (CU_STREAM_NON_BLOCKING).
func (c *Ctx) NewStream() (*Stream, error) {
	if err := c.bound(); err != nil {
		return nil, err
	}
	const nonBlocking = 1
	s := &Stream{}
	if err := check("cuStreamCreate", C.cuzk_stream_create(&s.h, nonBlocking)); err != nil {
		return nil, err
	}
	return s, nil
}

// SyncStream waits for all work queued on s.
func (c *Ctx) SyncStream(s *Stream) error {
	if err := c.bound(); err != nil {
		return err
	}
	return check("cuStreamSynchronize", C.cuzk_stream_synchronize(s.handle()))
}

// DestroyStream releases s once its queued work completes.
func (c *Ctx) DestroyStream(s *Stream) error {
	if err := c.bound(); err != nil {
		return err
	}
	return check("cuStreamDestroy", C.cuzk_stream_destroy(s.h))
}

// Event marks a point in a stream; pairs of events time device work.
type Event struct{ h C.CUevent }

// NewEvent creates a timing event.
func (c *Ctx) NewEvent() (*Event, error) {
	if err := c.bound(); err != nil {
		return nil, err
	}
	e := &Event{}
	if err := check("cuEventCreate", C.cuzk_event_create(&e.h, 0)); err != nil {
		return nil, err
	}
	return e, nil
}

// Record enqueues e on stream s (nil: the default stream).
func (c *Ctx) Record(e *Event, s *Stream) error {
	if err := c.bound(); err != nil {
		return err
	}
	return check("cuEventRecord", C.cuzk_event_record(e.h, s.handle()))
}

// SyncEvent waits until the work before e's last Record has completed.
func (c *Ctx) SyncEvent(e *Event) error {
	if err := c.bound(); err != nil {
		return err
	}
	return check("cuEventSynchronize", C.cuzk_event_synchronize(e.h))
}

// Elapsed returns the device time between two recorded, completed events
// (resolution about half a microsecond, per the driver documentation).
func (c *Ctx) Elapsed(start, end *Event) (time.Duration, error) {
	if err := c.bound(); err != nil {
		return 0, err
	}
	var ms C.float
	if err := check("cuEventElapsedTime", C.cuzk_event_elapsed(&ms, start.h, end.h)); err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// DestroyEvent releases e.
func (c *Ctx) DestroyEvent(e *Event) error {
	if err := c.bound(); err != nil {
		return err
	}
	return check("cuEventDestroy", C.cuzk_event_destroy(e.h))
}

// Timer times device work on a stream with a reusable pair of events.
type Timer struct{ start, end *Event }

// NewTimer creates the timer's two events.
func (c *Ctx) NewTimer() (*Timer, error) {
	start, err := c.NewEvent()
	if err != nil {
		return nil, err
	}
	end, err := c.NewEvent()
	if err != nil {
		return nil, errors.Join(err, c.DestroyEvent(start))
	}
	return &Timer{start: start, end: end}, nil
}

// Time records an event on s, runs enqueue (which queues work on s),
// records a second event, waits for it and returns the device time between
// the two.
func (c *Ctx) Time(t *Timer, s *Stream, enqueue func() error) (time.Duration, error) {
	if err := c.Record(t.start, s); err != nil {
		return 0, err
	}
	if err := enqueue(); err != nil {
		return 0, err
	}
	if err := c.Record(t.end, s); err != nil {
		return 0, err
	}
	if err := c.SyncEvent(t.end); err != nil {
		return 0, err
	}
	return c.Elapsed(t.start, t.end)
}

// FreeTimer destroys the timer's events.
func (c *Ctx) FreeTimer(t *Timer) error {
	return errors.Join(c.DestroyEvent(t.start), c.DestroyEvent(t.end))
}
