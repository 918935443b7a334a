package cas

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cuzk-dev/cuzk/internal/environ"
	"github.com/cuzk-dev/cuzk/internal/renameio"
)

// ErrNotFound reports a cache miss: no entry, or an entry that was damaged
// and has been removed.
var ErrNotFound = errors.New("cas: not found")

// ErrCorrupt reports bytes whose hash is not their name.
var ErrCorrupt = errors.New("cas: corrupt")

// EnvDir names the variable that overrides the default cache directory.
const EnvDir = "CUZK_CACHE"

var _ = environ.Register(EnvDir, "the kernel cache directory (default ~/.cache/cuzk)")

// Store is a cache directory. Its methods are safe for concurrent use by
// goroutines and by processes sharing the directory: writes are atomic
// renames and builders coordinate through Lock.
type Store struct {
	dir string
	now func() time.Time
}

// Option configures a Store.
type Option func(*Store) error

// WithClock sets the clock used for entry times and Trim (tests).
func WithClock(now func() time.Time) Option {
	return func(s *Store) error {
		if now == nil {
			return errors.New("cas: nil clock")
		}
		s.now = now
		return nil
	}
}

// DefaultDir returns $CUZK_CACHE, else ~/.cache/cuzk (the user cache
// directory's cuzk folder).
func DefaultDir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("cas: no cache directory (set %s): %w", EnvDir, err)
	}
	return filepath.Join(base, "cuzk"), nil
}

// Open opens (creating if needed) the cache at dir.
func Open(dir string, opts ...Option) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("cas open %s: %w", dir, err)
	}
	s := &Store{dir: abs, now: time.Now}
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, err
		}
	}
	for _, sub := range []string{"a", "o", "r", "locks", "tmp"} {
		if err := os.MkdirAll(filepath.Join(abs, sub), 0o755); err != nil {
			return nil, fmt.Errorf("cas open %s: %w", dir, err)
		}
	}
	return s, nil
}

// Dir returns the cache directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) path(kind, hexID string) string {
	return filepath.Join(s.dir, kind, hexID[:2], hexID)
}

// writeAtomic writes b to path through internal/renameio (a temporary in
// the same directory, fsynced, renamed, directory fsynced), so readers never
// see a partial file and a crash never leaves one.
func (s *Store) writeAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return renameio.WriteFile(path, b, 0o644)
}
