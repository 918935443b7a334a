package cas

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
	for _, sub := range []string{"tmp", "a", "o", "r"} {
		if err := removeStale(filepath.Join(s.dir, sub), sub == "tmp", grace); err != nil {
			return r, fmt.Errorf("cas trim %s: %w", sub, err)
		}
	}
	return r, nil
}

// removeStale removes temporaries older than grace under root: every file
// when all is set (tmp/), else the hidden ones renameio leaves behind when a
// writer dies between create and rename.
func removeStale(root string, all bool, grace time.Time) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || !(all || isTemp(d.Name())) {
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.ModTime().Before(grace) {
			return nil // gone already, or young enough to belong to a live writer
		}
		return os.Remove(path)
	})
}

// isTemp reports a renameio temporary (".<name>.tmp<random>").
func isTemp(name string) bool { return strings.HasPrefix(name, ".") }

func walkFiles(root string, fn func(path string, info fs.FileInfo) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed by a concurrent trim or put: nothing to do
			}
			return err
		}
		if d.IsDir() || isTemp(d.Name()) {
			return nil // a write in progress (or abandoned) is not an entry or blob
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
