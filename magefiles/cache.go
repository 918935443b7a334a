//go:build mage

package main

import (
	"fmt"
	"time"

	"github.com/magefile/mage/mg"

	"github.com/cuzk-dev/cuzk/toolchain/cas"
)

// Cache targets inspect and trim the kernel cache ($CUZK_CACHE, default ~/.cache/cuzk).
type Cache mg.Namespace

func openCache() (*cas.Store, error) {
	dir, err := cas.DefaultDir()
	if err != nil {
		return nil, err
	}
	return cas.Open(dir)
}

// Stats shows the kernel cache's size, entries and hit counts.
func (Cache) Stats() error {
	s, err := openCache()
	if err != nil {
		return err
	}
	st, err := s.Stats()
	if err != nil {
		return err
	}
	total := st.Hits + st.Misses
	rate := 0.0
	if total > 0 {
		rate = 100 * float64(st.Hits) / float64(total)
	}
	fmt.Printf("cache %s\n  entries %d, blobs %d, %.1f MiB\n  lookups %d: %d hits (%.0f%%), %d misses, %d stored\n",
		st.Dir, st.Entries, st.Blobs, float64(st.BlobBytes)/(1<<20), total, st.Hits, rate, st.Misses, st.Puts)
	return nil
}

// Trim removes cache entries unused for the given number of days, and blobs nothing refers to.
func (Cache) Trim(days int) error {
	if days < 0 {
		return fmt.Errorf("cache:trim: days %d < 0", days)
	}
	s, err := openCache()
	if err != nil {
		return err
	}
	r, err := s.Trim(time.Duration(days) * 24 * time.Hour)
	if err != nil {
		return err
	}
	fmt.Printf("cache:trim: removed %d entries and %d blobs (%.1f MiB), kept %d entries\n",
		r.EntriesRemoved, r.BlobsRemoved, float64(r.BytesFreed)/(1<<20), r.EntriesKept)
	return nil
}
