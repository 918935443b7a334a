package cas

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Counters are the cumulative lookup results recorded in stats.json.
type Counters struct {
	Hits   int64 `json:"hits"`
	Misses int64 `json:"misses"`
	Puts   int64 `json:"puts"`
}

// Stats describes the store's contents and history.
type Stats struct {
	Dir       string
	Entries   int
	Blobs     int
	BlobBytes int64
	Counters
}

// Count adds one run's lookup results to the persistent counters, under the
// store-wide lock so concurrent processes do not lose updates.
func (s *Store) Count(c Counters) error {
	unlock, err := s.lockAll()
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := s.counters()
	if err != nil {
		return err
	}
	cur.Hits += c.Hits
	cur.Misses += c.Misses
	cur.Puts += c.Puts
	b, err := json.Marshal(cur)
	if err != nil {
		return fmt.Errorf("cas count: %w", err)
	}
	if err := s.writeAtomic(filepath.Join(s.dir, "stats.json"), b); err != nil {
		return fmt.Errorf("cas count: %w", err)
	}
	return nil
}

func (s *Store) counters() (Counters, error) {
	var c Counters
	b, err := os.ReadFile(filepath.Join(s.dir, "stats.json"))
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("cas stats: %w", err)
	}
	if json.Unmarshal(b, &c) != nil {
		return Counters{}, nil // damaged counters restart from zero; they are advisory
	}
	return c, nil
}

// Stats counts entries and blobs and reads the counters.
func (s *Store) Stats() (Stats, error) {
	st := Stats{Dir: s.dir}
	c, err := s.counters()
	if err != nil {
		return st, err
	}
	st.Counters = c
	err = walkFiles(filepath.Join(s.dir, "a"), func(string, fs.FileInfo) error { st.Entries++; return nil })
	if err != nil {
		return st, fmt.Errorf("cas stats: %w", err)
	}
	err = walkFiles(filepath.Join(s.dir, "o"), func(_ string, info fs.FileInfo) error {
		st.Blobs++
		st.BlobBytes += info.Size()
		return nil
	})
	if err != nil {
		return st, fmt.Errorf("cas stats: %w", err)
	}
	return st, nil
}
