package cas

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Lock takes the exclusive cross-process lock for action id and returns the
// function that releases it. Builders hold it from the cache lookup to the
// Put, so a second process waits and then finds the entry. The lock is an
// flock on a file under locks/, released by the kernel if the process dies.
func (s *Store) Lock(id ActionID) (unlock func(), err error) {
	return s.flock(filepath.Join(s.dir, "locks", id.String()[:16]))
}

// lockAll takes the store-wide lock used by Trim and the stats counters.
func (s *Store) lockAll() (unlock func(), err error) {
	return s.flock(filepath.Join(s.dir, "locks", "store"))
}

func (s *Store) flock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cas lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("cas lock %s: %w", path, err)
	}
	return func() {
		// Closing the descriptor drops the flock; an error here leaves nothing to undo.
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}
