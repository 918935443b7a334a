package driver

/*
#include "shim.h"
*/
import "C"

import "time"

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
