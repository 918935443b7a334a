package buildbench

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// copyLayout copies the kernel and include directories of the tree at src
// into a new tree at dst, keeping their relative paths.
func copyLayout(src, dst string, dirs []string) error {
	for _, d := range dirs {
		to := filepath.Join(dst, filepath.FromSlash(d))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return fmt.Errorf("copy %s: %w", d, err)
		}
		if err := os.CopyFS(to, os.DirFS(filepath.Join(src, filepath.FromSlash(d)))); err != nil {
			return fmt.Errorf("copy %s: %w", d, err)
		}
	}
	return nil
}

// appendLine adds a comment line to the file rel under root: a real content
// change that compiles to the same code.
func appendLine(root, rel, tag string) error {
	p := filepath.Join(root, filepath.FromSlash(rel))
	b, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("edit %s: %w", rel, err)
	}
	b = append(b, []byte("\n// buildbench: "+tag+"\n")...)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return fmt.Errorf("edit %s: %w", rel, err)
	}
	return nil
}

// restore writes the original bytes of rel back, as a checkout would: the
// content returns, the timestamp is new.
func restore(root, rel string, orig []byte) error {
	if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(rel)), orig, 0o644); err != nil {
		return fmt.Errorf("restore %s: %w", rel, err)
	}
	return nil
}

// touchAll sets the modification time of every file under dirs to now.
func touchAll(root string, dirs []string) error {
	now := time.Now()
	for _, d := range dirs {
		err := filepath.WalkDir(filepath.Join(root, filepath.FromSlash(d)), func(p string, ent fs.DirEntry, err error) error {
			if err != nil || ent.IsDir() {
				return err
			}
			return os.Chtimes(p, now, now)
		})
		if err != nil {
			return fmt.Errorf("touch %s: %w", d, err)
		}
	}
	return nil
}

// counter is a wrapper script standing in for nvcc that logs every compile
// (runs with -fatbin; version probes are not compiles) before running the
// real compiler, so both builders are counted the same way.
type counter struct {
	bin string // the wrapper, used as nvcc
	log string
}

func newCounter(dir, realNvcc string) (counter, error) {
	c := counter{bin: filepath.Join(dir, "bin", "nvcc"), log: filepath.Join(dir, "nvcc.log")}
	if err := os.MkdirAll(filepath.Dir(c.bin), 0o755); err != nil {
		return c, fmt.Errorf("nvcc wrapper: %w", err)
	}
	script := fmt.Sprintf("#!/bin/sh\ncase \"$*\" in *-fatbin*) echo \"$*\" >> %s;; esac\nexec %s \"$@\"\n",
		shellQuote(c.log), shellQuote(realNvcc))
	if err := os.WriteFile(c.bin, []byte(script), 0o755); err != nil {
		return c, fmt.Errorf("nvcc wrapper: %w", err)
	}
	return c, nil
}

// take returns how many compiles were logged since the last call.
func (c counter) take() (int, error) {
	b, err := os.ReadFile(c.log)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read nvcc log: %w", err)
	}
	if err := os.Remove(c.log); err != nil {
		return 0, fmt.Errorf("reset nvcc log: %w", err)
	}
	return bytes.Count(b, []byte("\n")), nil
}

// shellQuote quotes s for /bin/sh unless it is made of safe characters only.
func shellQuote(s string) string {
	safe := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_./=,+:@%-", r))
	}) < 0
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// clockProbe is the file settle writes to read the filesystem's clock.
const clockProbe = ".buildbench-clock"

// settle waits until a file written under root gets a modification time
// later than every file under root/dir. Kernels stamp files from a coarse
// clock (one tick is a few milliseconds), so an edit made right after a
// build can carry the same time as the build's last output, and an
// mtime-based builder then misses it. A person's edit comes long after the
// build; settle makes the scripted one come after it too, so ninja's counts
// do not depend on how fast the machine runs the sequence.
func settle(root, dir string, limit time.Duration) error {
	var newest time.Time
	err := filepath.WalkDir(filepath.Join(root, filepath.FromSlash(dir)), func(p string, ent fs.DirEntry, err error) error {
		if err != nil || ent.IsDir() {
			return err
		}
		info, err := ent.Info()
		if err != nil {
			return err
		}
		if m := info.ModTime(); m.After(newest) {
			newest = m
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("settle: %w", err)
	}
	probe := filepath.Join(root, clockProbe)
	defer os.Remove(probe)
	for deadline := time.Now().Add(limit); ; time.Sleep(time.Millisecond) {
		if err := os.WriteFile(probe, nil, 0o644); err != nil {
			return fmt.Errorf("settle: %w", err)
		}
		info, err := os.Stat(probe)
		if err != nil {
			return fmt.Errorf("settle: %w", err)
		}
		if info.ModTime().After(newest) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("settle: the filesystem clock (%s) did not pass the newest output under %s (%s) within %s",
				info.ModTime().Format(time.RFC3339Nano), dir, newest.Format(time.RFC3339Nano), limit)
		}
	}
}
