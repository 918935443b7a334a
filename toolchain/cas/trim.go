package cas

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// TrimResult says what Trim removed and kept.
type TrimResult struct {
	EntriesRemoved, EntriesKept int
	BlobsRemoved                int
	BytesFreed                  int64
}

// Trim removes entries not used (hit or written) within maxAge, then every
// blob no remaining entry names, and stale temporary files. It holds the
// store-wide lock; concurrent builders are safe because an entry is written
// after its blobs, and a blob written by a concurrent Put is younger than
// the one-hour grace Trim gives unreferenced blobs.
func (s *Store) Trim(maxAge time.Duration) (TrimResult, error) {
	unlock, err := s.lockAll()
	if err != nil {
		return TrimResult{}, err
	}
	defer unlock()
	var r TrimResult
	cutoff := s.now().Add(-maxAge)
	live := map[string]bool{}
	err = walkFiles(filepath.Join(s.dir, "a"), func(path string, info fs.FileInfo) error {
		if info.ModTime().Before(cutoff) {
			r.EntriesRemoved++
			r.BytesFreed += info.Size()
			return os.Remove(path)
		}
		r.EntriesKept++
		var e Entry
		if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &e) == nil {
			for _, o := range e.Outputs {
				live[o.ID.String()] = true
			}
		}
		return nil
	})
	if err != nil {
		return r, fmt.Errorf("cas trim entries: %w", err)
	}
	grace := s.now().Add(-time.Hour)
	err = walkFiles(filepath.Join(s.dir, "o"), func(path string, info fs.FileInfo) error {
		if live[info.Name()] || info.ModTime().After(grace) {
			return nil
		}
		r.BlobsRemoved++
		r.BytesFreed += info.Size()
		return os.Remove(path)
	})
	if err != nil {
		return r, fmt.Errorf("cas trim blobs: %w", err)
	}
	err = walkFiles(filepath.Join(s.dir, "tmp"), func(path string, info fs.FileInfo) error {
		if info.ModTime().Before(grace) {
			return os.Remove(path)
		}
		return nil
	})
	if err != nil {
		return r, fmt.Errorf("cas trim tmp: %w", err)
	}
	return r, nil
}

func walkFiles(root string, fn func(path string, info fs.FileInfo) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed by a concurrent trim or put: nothing to do
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		return fn(path, info)
	})
}
