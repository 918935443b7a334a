package engine

import (
	"container/heap"
	"context"
	"errors"
	"sync"
)

// ErrQueueFull means the queue holds as many jobs as it may.
var ErrQueueFull = errors.New("engine: queue full")

// errClosed is returned by waits once the engine shuts down.
var errClosed = errors.New("engine: closed")

// queue is the bounded priority queue of jobs waiting for synthesis:
// highest priority first, first in first out within a priority.
type queue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	h      jobHeap
	cap    int
	closed bool
}

func newQueue(capacity int) *queue {
	q := &queue{cap: capacity}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// pushAll queues every job of js, or none when they do not all fit.
func (q *queue) pushAll(js []*Job) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return errClosed
	}
	if len(q.h)+len(js) > q.cap {
		return ErrQueueFull
	}
	for _, j := range js {
		heap.Push(&q.h, j)
	}
	q.cond.Broadcast()
	return nil
}

// pop waits for the highest-priority job; it fails once closed or ctx ends.
func (q *queue) pop(ctx context.Context) (*Job, error) {
	stop := context.AfterFunc(ctx, func() {
		q.mu.Lock()
		q.cond.Broadcast()
		q.mu.Unlock()
	})
	defer stop()
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.h) == 0 {
		if q.closed {
			return nil, errClosed
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		q.cond.Wait()
	}
	return heap.Pop(&q.h).(*Job), nil
}

// peek returns the job pop would return now, leaving it queued; nil when
// the queue is empty.
func (q *queue) peek() *Job {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.h) == 0 {
		return nil
	}
	return q.h[0]
}

// remove takes j out of the queue; false when it was not queued.
func (q *queue) remove(j *Job) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if j.index < 0 || j.index >= len(q.h) || q.h[j.index] != j {
		return false
	}
	heap.Remove(&q.h, j.index)
	return true
}

func (q *queue) depths() map[Priority]int {
	q.mu.Lock()
	defer q.mu.Unlock()
	d := map[Priority]int{}
	for _, j := range q.h {
		d[j.Req.Priority]++
	}
	return d
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
}

// jobHeap orders jobs by priority (high first), then submission order.
type jobHeap []*Job

func (h jobHeap) Len() int { return len(h) }
func (h jobHeap) Less(a, b int) bool {
	return outranks(h[a], h[b])
}
func (h jobHeap) Swap(a, b int) {
	h[a], h[b] = h[b], h[a]
	h[a].index, h[b].index = a, b
}
func (h *jobHeap) Push(x any) {
	j := x.(*Job)
	j.index = len(*h)
	*h = append(*h, j)
}
func (h *jobHeap) Pop() any {
	old := *h
	j := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	j.index = -1
	return j
}

// outranks reports whether a runs before b.
func outranks(a, b *Job) bool {
	if a.Req.Priority != b.Req.Priority {
		return a.Req.Priority > b.Req.Priority
	}
	return a.seq < b.seq
}

// handoff carries synthesized jobs to the device workers. It holds at most
// cap jobs, except that a job outranking every job in it always enters (so
// a CRITICAL job never waits behind a full hand-off of NORMAL ones). A
// worker takes the highest-priority job, preferring, within a priority,
// jobs whose key its device holds.
type handoff struct {
	mu     sync.Mutex
	cond   *sync.Cond
	jobs   []*Job
	cap    int
	closed bool
}

func newHandoff(capacity int) *handoff {
	h := &handoff{cap: capacity}
	h.cond = sync.NewCond(&h.mu)
	return h
}

func (h *handoff) wake(ctx context.Context) func() bool {
	return context.AfterFunc(ctx, func() {
		h.mu.Lock()
		h.cond.Broadcast()
		h.mu.Unlock()
	})
}

// put waits for room for j (see handoff), until ctx ends or the hand-off
// closes.
func (h *handoff) put(ctx context.Context, j *Job) error {
	defer h.wake(ctx)()
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		if h.closed {
			return errClosed
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(h.jobs) < h.cap || h.outranksAllLocked(j) {
			h.jobs = append(h.jobs, j)
			h.cond.Broadcast()
			return nil
		}
		h.cond.Wait()
	}
}

func (h *handoff) outranksAllLocked(j *Job) bool {
	for _, o := range h.jobs {
		if o.Req.Priority >= j.Req.Priority {
			return false
		}
	}
	return true
}

// take waits for a job that eligible accepts and returns the best of
// them: the highest priority, then one prefer accepts, then the oldest.
// Jobs eligible refuses are left for other workers.
func (h *handoff) take(ctx context.Context, eligible, prefer func(*Job) bool) (*Job, error) {
	defer h.wake(ctx)()
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		if h.closed {
			return nil, errClosed
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if j := h.popBestLocked(eligible, prefer); j != nil {
			return j, nil
		}
		h.cond.Wait()
	}
}

// tryTake is take without the wait: nil when no job eligible accepts is
// there now.
func (h *handoff) tryTake(eligible, prefer func(*Job) bool) *Job {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	return h.popBestLocked(eligible, prefer)
}

// popBestLocked takes out the best eligible job (bestLocked), or returns
// nil.
func (h *handoff) popBestLocked(eligible, prefer func(*Job) bool) *Job {
	i := h.bestLocked(eligible, prefer)
	if i < 0 {
		return nil
	}
	j := h.jobs[i]
	h.jobs = append(h.jobs[:i], h.jobs[i+1:]...)
	h.cond.Broadcast()
	return j
}

// bestLocked returns the index of the best eligible job whose key is
// ready, or -1. A job whose key still loads beside its synthesis waits in
// the hand-off, not on a device: the device proves other jobs meanwhile,
// and the load's end wakes the workers (startKeyLoad).
func (h *handoff) bestLocked(eligible, prefer func(*Job) bool) int {
	best, bestPref := -1, false
	for i, j := range h.jobs {
		if !eligible(j) || !j.keyReady() {
			continue
		}
		p := prefer(j)
		if best < 0 {
			best, bestPref = i, p
			continue
		}
		b := h.jobs[best]
		switch {
		case j.Req.Priority != b.Req.Priority:
			if j.Req.Priority > b.Req.Priority {
				best, bestPref = i, p
			}
		case p != bestPref:
			if p {
				best, bestPref = i, p
			}
		case j.seq < b.seq:
			best, bestPref = i, p
		}
	}
	return best
}

// kick wakes the workers waiting in take, so that they look at the jobs
// again (a device became busy, and jobs it holds keys for are theirs now).
func (h *handoff) kick() {
	h.mu.Lock()
	h.cond.Broadcast()
	h.mu.Unlock()
}

// remove takes j out of the hand-off; false when it was not there.
func (h *handoff) remove(j *Job) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, o := range h.jobs {
		if o == j {
			h.jobs = append(h.jobs[:i], h.jobs[i+1:]...)
			h.cond.Broadcast()
			return true
		}
	}
	return false
}

// putBack returns j, which a worker took, to the front of the hand-off
// without waiting for room (j's is still there): a worker that took j
// early gives it up for a job that outranks it, or to other devices when
// its own goes out of service. False once the hand-off is closed.
func (h *handoff) putBack(j *Job) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.jobs = append([]*Job{j}, h.jobs...)
	h.cond.Broadcast()
	return true
}

// drain takes out every job still waiting (at shutdown).
func (h *handoff) drain() []*Job {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.jobs
	h.jobs = nil
	h.cond.Broadcast()
	return out
}

func (h *handoff) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.jobs)
}

func (h *handoff) close() {
	h.mu.Lock()
	h.closed = true
	h.cond.Broadcast()
	h.mu.Unlock()
}

// budget is the host memory of synthesized jobs in flight, and of the
// solved vectors kept for reuse once their proofs are made: solving into
// kept vectors (r1cs.WithBuffers) skips allocating, pinning and first
// touching them (16 GiB for a 2^27 partition) and leaves the heap steady.
// Kept vectors stay counted in used; a job that needs room first takes
// vectors of its own key, and drops others' when the budget is short.
// Dropped vectors are freed by the caller (vectors.free), outside the lock.
type budget struct {
	mu    sync.Mutex
	cond  *sync.Cond
	limit int64 // 0: unbounded
	used  int64
	// kept holds vectors by key; keptMax bounds them per key when the
	// budget is unbounded (the engine passes the most jobs that can hold
	// vectors at once, so keeping never holds more than was in use).
	kept    map[string][]keptVectors
	keptMax int
	reused  int64 // jobs that solved into kept vectors
}

type keptVectors struct {
	v     *vectors
	bytes int64
}

func newBudget(limit int64, keptMax int) *budget {
	b := &budget{limit: limit, kept: map[string][]keptVectors{}, keptMax: keptMax}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// acquireFor reserves n bytes for a job of key: it returns kept vectors of
// that key (whose bytes it already holds) when there are some, and
// otherwise waits until n bytes fit, dropping kept vectors of other keys
// while they don't (returned in dropped, for the caller to free). The
// caller has checked n ≤ limit.
func (b *budget) acquireFor(ctx context.Context, key string, n int64) (got *vectors, dropped []*vectors, err error) {
	defer context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.cond.Broadcast()
		b.mu.Unlock()
	})()
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		if err := ctx.Err(); err != nil {
			return nil, dropped, err
		}
		if len(b.kept[key]) > 0 {
			k := b.popKept(key)
			b.reused++
			b.used += n - k.bytes // equal for one key's shape; keeps the books right anyway
			return k.v, dropped, nil
		}
		if b.limit <= 0 || b.used+n <= b.limit {
			b.used += n
			return nil, dropped, nil
		}
		if v := b.dropOther(key); v != nil {
			dropped = append(dropped, v)
			continue
		}
		b.cond.Wait()
	}
}

// dropOther takes out one kept entry of a key other than key, if any.
func (b *budget) dropOther(key string) *vectors {
	for k, ks := range b.kept {
		if k == key || len(ks) == 0 {
			continue
		}
		last := b.popKept(k)
		b.used -= last.bytes
		return last.v
	}
	return nil
}

// popKept takes the last kept entry of key (there is one).
func (b *budget) popKept(key string) keptVectors {
	ks := b.kept[key]
	last := ks[len(ks)-1]
	ks[len(ks)-1] = keptVectors{} // the slice's array no longer holds it
	b.kept[key] = ks[:len(ks)-1]
	return last
}

// keep takes back a job's reservation of n bytes together with its solved
// vectors, for the next job of key. It returns v when it does not keep it
// (unbounded and enough kept already), for the caller to free.
func (b *budget) keep(key string, v *vectors, n int64) (dropped *vectors) {
	b.mu.Lock()
	defer b.mu.Unlock()
	defer b.cond.Broadcast()
	if v == nil || (b.limit <= 0 && len(b.kept[key]) >= b.keptMax) {
		b.used -= n
		return v
	}
	b.kept[key] = append(b.kept[key], keptVectors{v: v, bytes: n})
	return nil
}

// drainKept takes out every kept entry (at shutdown), for the caller to
// free.
func (b *budget) drainKept() []*vectors {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*vectors
	for k, ks := range b.kept {
		for _, kv := range ks {
			b.used -= kv.bytes
			out = append(out, kv.v)
		}
		delete(b.kept, k)
	}
	return out
}

// keptCount is how many vector sets are kept for key.
func (b *budget) keptCount(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.kept[key])
}

// tryReserve reserves n bytes when they fit the bound now, without
// waiting and without dropping kept vectors; never when unbounded.
func (b *budget) tryReserve(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.limit <= 0 || b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.cond.Broadcast()
	b.mu.Unlock()
}

// inUse is the reserved bytes, kept vectors included.
func (b *budget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// keptBytes is the part of inUse held by kept vectors.
func (b *budget) keptBytes() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.keptLocked()
}

// jobBytes is the part of inUse reserved by jobs (not kept).
func (b *budget) jobBytes() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used - b.keptLocked()
}

func (b *budget) keptLocked() int64 {
	var n int64
	for _, ks := range b.kept {
		for _, k := range ks {
			n += k.bytes
		}
	}
	return n
}
