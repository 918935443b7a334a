package r1cs

import (
	"fmt"
	"sync"
)

// Cache holds one System per shape key. A shape key names everything that
// determines a circuit's constraints (kind and size, e.g. "porep/2KiB"); the
// caller chooses it and guarantees that equal keys mean equal shapes.
// Cache is safe for concurrent use: concurrent calls for one key compile once
// and share the result. Failed compilations are not cached.
type Cache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry
}

type cacheEntry struct {
	done chan struct{}
	sys  *System
	err  error
}

// Compile returns the System cached under key, compiling c in shape mode on
// the first call.
func (c *Cache) Compile(key string, circuit Circuit) (*System, error) {
	c.mu.Lock()
	if c.entries == nil {
		c.entries = make(map[string]*cacheEntry)
	}
	if e, ok := c.entries[key]; ok {
		c.mu.Unlock()
		<-e.done
		if e.err != nil {
			return nil, fmt.Errorf("shape %q: %w", key, e.err)
		}
		return e.sys, nil
	}
	e := &cacheEntry{done: make(chan struct{})}
	c.entries[key] = e
	c.mu.Unlock()

	e.sys, e.err = Compile(circuit)
	if e.err != nil {
		c.mu.Lock()
		delete(c.entries, key)
		c.mu.Unlock()
	}
	close(e.done)
	if e.err != nil {
		return nil, fmt.Errorf("shape %q: %w", key, e.err)
	}
	return e.sys, nil
}

// Len reports how many shapes are cached.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
