package renameio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// PendingFile is a temporary file that becomes path on CloseAtomicallyReplace
// and disappears on Cleanup. It is not safe for concurrent use; distinct
// PendingFiles for the same path are (the last rename wins, whole).
type PendingFile struct {
	*os.File
	path string
	done bool
}

// Create returns a PendingFile that will replace path, created in path's
// directory (so the rename cannot cross file systems) with mode perm.
func Create(path string, perm fs.FileMode) (*PendingFile, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("create temporary for %s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("chmod temporary for %s: %w", path, err)
	}
	return &PendingFile{File: f, path: path}, nil
}

// CloseAtomicallyReplace fsyncs and closes the file, renames it over the
// destination and fsyncs the directory. On error the temporary is removed
// and the destination is left as it was.
func (p *PendingFile) CloseAtomicallyReplace() error {
	if p.done {
		return fmt.Errorf("replace %s: already closed", p.path)
	}
	p.done = true
	tmp := p.Name()
	err := p.Sync()
	err = errors.Join(err, p.Close())
	if err == nil {
		err = os.Rename(tmp, p.path)
	}
	if err != nil {
		_ = os.Remove(tmp) // best effort: the write error is the one to report
		return fmt.Errorf("replace %s: %w", p.path, err)
	}
	if err := SyncDir(filepath.Dir(p.path)); err != nil {
		return fmt.Errorf("replace %s: %w", p.path, err)
	}
	return nil
}

// Cleanup closes and removes the temporary file unless it has already been
// renamed into place; deferring it after Create is always safe.
func (p *PendingFile) Cleanup() {
	if p.done {
		return
	}
	p.done = true
	_ = p.Close()           // the file is being discarded: a close error changes nothing
	_ = os.Remove(p.Name()) // best effort: a leftover temporary is harmless and hidden
}

// WriteFile writes data to path atomically with mode perm.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return WriteFrom(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFrom writes what write produces to path atomically with mode perm.
// If write fails, path is left as it was.
func WriteFrom(path string, perm fs.FileMode, write func(io.Writer) error) error {
	p, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer p.Cleanup()
	if err := write(p); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return p.CloseAtomicallyReplace()
}

// SyncDir fsyncs the directory dir, making renames and creations in it
// durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}
