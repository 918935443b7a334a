package keys

// The Go collector's goal is the live heap times (1 + GOGC/100): with the
// default GOGC of 100, a key decoded into the heap (a .pk file, or a
// development key kept in memory) lets as much garbage as the key itself
// build up before the next collection. At 2^27 that was 27 GiB of garbage
// beside a streamed 46 GiB key, and a peak host RSS of 112.9 GiB
// (docs/runs/h100-c2-16gib-spread.log). A key's points hold no pointers, so
// the collector marks them at almost no cost: while keys live in the heap,
// the manager lowers GOGC so that the garbage allowed stays near gcSlack.

// gcSlack is the garbage the collector is let build up beside the heap's
// keys: what the default GOGC allows beside a 4 GiB live heap.
const gcSlack = 4 << 30

// gcPercentFor is the GOGC for heapKeys bytes of keys in the Go heap: 100
// (the default) up to slack bytes of keys, then slack's share of them,
// never under 10.
func gcPercentFor(heapKeys, slack int64) int {
	if heapKeys <= slack {
		return 100
	}
	return max(10, int(100*slack/heapKeys))
}

// heapKeyBytesLocked is the bytes of the ready keys whose points the Go
// heap holds (not mapped from a raw key file). A released host copy counts:
// its pages went back to the system, but the collector still counts the
// objects as live.
func (m *Manager) heapKeyBytesLocked() int64 {
	var n int64
	for _, e := range m.entries {
		if isReady(e) && e.mapped == nil && e.pk != nil {
			n += keyBytes(e.pk)
		}
	}
	return n
}

// tuneGCLocked sets GOGC for the keys now in the heap (Config.GCPercent),
// and logs a change.
func (m *Manager) tuneGCLocked() {
	if m.cfg.GCPercent == nil {
		return
	}
	heap := m.heapKeyBytesLocked()
	p := gcPercentFor(heap, m.gcSlack)
	if p == m.gcPercent {
		return
	}
	m.cfg.GCPercent(p)
	m.cfg.Log.Info("Go collector tuned to the keys in its heap", "gogc", p, "was", m.gcPercent, "heap_key_bytes", heap)
	m.gcPercent = p
}
