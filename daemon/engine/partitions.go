package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
)

// checkInput validates every partition's input of req.
func checkInput(req Request) error {
	p := req.partitions()
	if p == 1 {
		return req.Circuit.Check(req.Input)
	}
	size := req.Circuit.InputSize()
	if len(req.Input) != p*size {
		return fmt.Errorf("%w: input: %d bytes, %d partitions of %s take %d", registry.ErrInvalid, len(req.Input), p,
			req.Circuit.Key, p*size)
	}
	for k := range p {
		if err := req.Circuit.Check(req.Input[k*size : (k+1)*size]); err != nil {
			return fmt.Errorf("partition %d: %w", k, err)
		}
	}
	return nil
}

// splitLocked makes the partitions of multi-partition job j: one child job
// per partition, with consecutive sequence numbers (so they run in order
// within their priority), contexts under j's (cancelling j cancels them),
// and j's priority. They are not registered by id: they report to j.
func (e *Engine) splitLocked(j *Job) []*Job {
	p := j.Req.partitions()
	size := j.Req.Circuit.InputSize()
	j.parts = &partitionState{results: make([]*Result, p), remaining: p}
	for k := range p {
		req := j.Req
		req.RequestID, req.Partitions, req.Input = "", 1, j.Req.Input[k*size:(k+1)*size]
		c := &Job{ID: fmt.Sprintf("%s/%d", j.ID, k), Req: req, seq: e.seq, index: -1, state: Queued,
			changed: make(chan struct{}), submitted: j.submitted, parent: j, part: k}
		e.seq++
		c.ctx, c.cancel = context.WithCancel(j.ctx)
		j.parts.children = append(j.parts.children, c)
	}
	return j.parts.children
}

// partitionEnded records a partition's end in its parent and ends the
// parent with the last one: failed (with the first failure) if any failed,
// else done with every partition's result in order. A failure cancels the
// other partitions.
func (e *Engine) partitionEnded(c *Job, r *Result, err error) {
	p := c.parent
	ps := p.parts
	ps.mu.Lock()
	if err != nil && ps.err == nil {
		ps.err = fmt.Errorf("partition %d: %w", c.part, err)
		p.cancel() // the siblings stop at their next stage
	}
	if err == nil {
		ps.results[c.part] = r
	}
	ps.remaining--
	last, perr := ps.remaining == 0, ps.err
	ps.mu.Unlock()
	if !last {
		return
	}
	if perr != nil {
		if errors.Is(perr, context.Canceled) {
			perr = fmt.Errorf("job %s: %w", p.ID, perr)
		}
		e.end(p, nil, perr)
		return
	}
	res := combine(ps.results)
	p.timings = res.Timings
	e.end(p, res, nil)
}

// combine makes a multi-partition job's result: its partitions in order,
// timings summed (phases too), every device that proved one.
func combine(parts []*Result) *Result {
	r := &Result{Partitions: parts, Verified: true, Timings: Timings{Phases: map[string]time.Duration{}}}
	seen := map[string]bool{}
	for _, p := range parts {
		t := p.Timings
		r.Timings.Queue += t.Queue
		r.Timings.KeyLoad += t.KeyLoad
		r.Timings.Synthesis += t.Synthesis
		r.Timings.Handoff += t.Handoff
		r.Timings.Prove += t.Prove
		r.Timings.Verify += t.Verify
		for k, v := range t.Phases {
			r.Timings.Phases[k] += v
		}
		r.Verified = r.Verified && p.Verified
		if !seen[p.Device] {
			seen[p.Device] = true
			if r.Device != "" {
				r.Device += ","
			}
			r.Device += p.Device
		}
	}
	return r
}
