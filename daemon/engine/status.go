package engine

import (
	"log/slog"
	"sort"
	"time"
)

// DeviceStatus describes one device worker.
type DeviceStatus struct {
	Name      string
	BusyRatio float64 // share of the engine's uptime spent proving
	JobsDone  int64
	// Current are the jobs being proved: one, or a batch's in its order;
	// none when idle.
	Current []string
	Down    error // non-nil when the device left service
	// Keys are the keys hot on the device with how each uses its memory,
	// for a device that plans them (a GPU), by key.
	Keys []KeyPlacement
}

// Status is a snapshot of the engine.
type Status struct {
	Uptime       time.Duration
	Devices      []DeviceStatus
	Queued       map[Priority]int
	QueueSize    int
	Synthesizing int
	Ready        int
	Proving      int // jobs on a device, each of a batch
	HostInFlight int64
	HostBudget   int64
	Draining     bool
}

// Status returns a snapshot of the queue, the pipeline and the devices.
func (e *Engine) Status() Status {
	now := time.Now()
	up := now.Sub(e.start)
	s := Status{Uptime: up, Queued: e.queue.depths(), QueueSize: e.cfg.QueueSize, Ready: e.readyJobs(),
		HostInFlight: e.budget.inUse(), HostBudget: e.cfg.HostBudget}
	e.mu.Lock()
	s.Synthesizing, s.Draining = e.synth, e.draining
	e.mu.Unlock()
	for _, w := range e.workers {
		w.mu.Lock()
		d := DeviceStatus{Name: w.dev.Name(), JobsDone: w.done, Current: append([]string(nil), w.current...), Down: w.down}
		placed := make([]KeyPlacement, 0, len(w.placed))
		for _, p := range w.placed {
			placed = append(placed, p)
		}
		if up > 0 {
			d.BusyRatio = float64(w.busyLocked(now)) / float64(up) // the running proof counted so far
		}
		s.Proving += len(w.current)
		w.mu.Unlock()
		for _, p := range placed { // outside w.mu: the key manager has its own lock
			if e.cfg.Keys.IsHotOn(p.Key, d.Name) {
				d.Keys = append(d.Keys, p)
			}
		}
		sort.Slice(d.Keys, func(a, b int) bool { return d.Keys[a].Key < d.Keys[b].Key })
		s.Devices = append(s.Devices, d)
	}
	sort.Slice(s.Devices, func(a, b int) bool { return s.Devices[a].Name < s.Devices[b].Name })
	return s
}

// logTiming writes the job's one CUZK_TIMING line of key=value fields.
func (e *Engine) logTiming(j *Job, r *Result, err error) {
	t := j.timings
	attrs := []any{"job", j.ID, "request", j.Req.RequestID, "circuit", j.Req.Circuit.Key, "priority", j.Req.Priority.String(),
		"state", j.State().String(), "queue", t.Queue, "key_load", t.KeyLoad, "synthesis", t.Synthesis, "synthesis_workers", t.SynthesisWorkers,
		"handoff", t.Handoff, "prove", t.Prove, "sent_ahead_bytes", t.SentAheadBytes, "verify", t.Verify, "total", t.Total}
	if r != nil {
		attrs = append(attrs, "device", r.Device)
		names := make([]string, 0, len(t.Phases))
		for p := range t.Phases {
			names = append(names, p)
		}
		sort.Strings(names)
		for _, p := range names {
			attrs = append(attrs, "phase."+p, t.Phases[p])
		}
	}
	if err != nil {
		attrs = append(attrs, "err", err.Error())
	}
	e.cfg.Log.Log(e.ctx, slog.LevelInfo, "CUZK_TIMING", attrs...)
}
