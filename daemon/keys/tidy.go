package keys

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// openDir takes the key directory's shared lock (best effort) and tidies it: temporary
// files of interrupted writes go (all of them when no other process uses
// the directory), and the directory is trimmed to DirBudget.
func (m *Manager) openDir() {
	unlock, alone, err := lockDir(m.cfg.Dir)
	if err != nil { // a file system without locks: only stale temporary files go
		m.cfg.Log.Warn("key directory: no lock, so only temporary files older than stale_temp are removed", "dir", m.cfg.Dir, "err", err)
		unlock, alone = func() {}, false
	}
	m.unlockDir = unlock
	removed, err := removeTemp(m.cfg.Dir, alone, m.cfg.StaleTemp, m.now())
	if len(removed) > 0 {
		m.cfg.Log.Info("key directory: temporary files of interrupted writes removed", "dir", m.cfg.Dir, "files", removed)
	}
	if err != nil {
		m.cfg.Log.Warn("key directory: temporary files left", "err", err)
	}
	if _, err := m.trimDir(); err != nil {
		m.cfg.Log.Warn("key directory: trimming to its budget", "err", err)
	}
}

// tidyDir runs after a development key was written: stale temporary files
// go, and the directory is trimmed to DirBudget.
func (m *Manager) tidyDir() {
	if _, err := removeTemp(m.cfg.Dir, false, m.cfg.StaleTemp, m.now()); err != nil {
		m.cfg.Log.Warn("key directory: temporary files left", "err", err)
	}
	if _, err := m.trimDir(); err != nil {
		m.cfg.Log.Warn("key directory: trimming to its budget", "err", err)
	}
}

// touchKey marks the files of key (production and development) as used
// now, for trimDir's least-recently-used order.
func (m *Manager) touchKey(key string) {
	base := filepath.Join(m.cfg.Dir, FileName(key))
	for _, pattern := range []string{base + ".*", base + "-setup*"} {
		paths, _ := filepath.Glob(pattern) // the pattern is well formed
		for _, p := range paths {
			touch(p, m.now())
		}
	}
}

// checkUnused decodes, in the background, a .pk a load did not read
// because the raw key file beside it was used, so that a damaged one does
// not go unnoticed: it is logged as an error naming both files and listed
// by Damaged; a damaged development .pk is deleted (devkeys writes it again
// when it needs one). Each file is checked once per manager.
func (m *Manager) checkUnused(pkPath, usedPath string, dev bool) {
	m.mu.Lock()
	if _, seen := m.damaged[pkPath]; seen {
		m.mu.Unlock()
		return
	}
	m.damaged[pkPath] = nil // being checked, or sound
	m.mu.Unlock()
	go func() {
		err := readFileCtx(m.ctx, pkPath, new(groth16.ProvingKey))
		if err == nil || m.ctx.Err() != nil {
			return
		}
		m.mu.Lock()
		m.damaged[pkPath] = err
		m.mu.Unlock()
		if dev {
			rmErr := os.Remove(pkPath)
			m.cfg.Log.Error("development key file damaged and deleted; the raw key file is used", "damaged", pkPath,
				"used", usedPath, "err", err, "remove_err", rmErr)
			return
		}
		m.cfg.Log.Error("production key file damaged (not used: the raw key file is; replace it)", "damaged", pkPath,
			"used", usedPath, "err", err)
	}()
}

// Damaged lists the key files found damaged beside the file a load used,
// with what is wrong with them.
func (m *Manager) Damaged() map[string]error {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]error{}
	for p, err := range m.damaged {
		if err != nil {
			out[p] = err
		}
	}
	return out
}

// readFileCtx is readFile that stops when ctx ends.
func readFileCtx(ctx context.Context, path string, dst io.ReaderFrom) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	if _, err := dst.ReadFrom(bufio.NewReaderSize(ctxReader{ctx, f}, 1<<20)); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// devShape is the shape name of a development key's file name.
func devShape(name string) string {
	shape, _, _ := strings.Cut(name, "-setup")
	return shape
}
