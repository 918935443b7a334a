package buildimage

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/cuzk-dev/cuzk/ci/debian"
	"github.com/cuzk-dev/cuzk/internal/renameio"
)

// LockFile is the lock's path, relative to the repository root.
const LockFile = "toolchain/build-image.lock.json"

// LockVersion is the lock format's version; a lock of another version is
// refused.
const LockVersion = 1

// Lock pins every Debian package of the build image. It is plain data, safe
// to share once loaded.
type Lock struct {
	// Version is LockVersion.
	Version int `json:"version"`
	// Suite is the Debian release ("bookworm").
	Suite string `json:"suite"`
	// Architecture is the Debian architecture ("amd64").
	Architecture string `json:"architecture"`
	// Components are the archive components resolved from.
	Components []string `json:"components"`
	// Mirrors are the archive roots the .debs are downloaded from (the main
	// archive and the security archive); each package's Path is relative to
	// one of them.
	Mirrors []string `json:"mirrors"`
	// Include are the packages asked for; the closure adds their
	// dependencies, Debian's Essential set and apt.
	Include []string `json:"include"`
	// Epoch is SOURCE_DATE_EPOCH for the root's timestamps (seconds).
	Epoch int64 `json:"epoch"`
	// Packages is the closure, sorted by name.
	Packages []debian.Package `json:"packages"`
}

// LockID is the sha256 of a lock's canonical JSON: it names the image the
// lock builds (and its cache entry).
type LockID [sha256.Size]byte

// String returns the hex form.
func (id LockID) String() string { return hex.EncodeToString(id[:]) }

// Short returns the first 12 hex digits.
func (id LockID) Short() string { return id.String()[:12] }

// ID returns the lock's LockID.
func (l Lock) ID() LockID {
	b, err := l.Marshal()
	if err != nil {
		// Marshal fails only on values JSON cannot hold; a Lock has none.
		panic(err)
	}
	return sha256.Sum256(b)
}

// Validate reports every problem that keeps l from building an image.
func (l Lock) Validate() error {
	var errs []error
	if l.Version != LockVersion {
		errs = append(errs, fmt.Errorf("lock version %d, want %d", l.Version, LockVersion))
	}
	if l.Suite == "" || l.Architecture == "" || len(l.Mirrors) == 0 || len(l.Include) == 0 {
		errs = append(errs, errors.New("lock: suite, architecture, mirrors and include are required"))
	}
	if l.Epoch <= 0 {
		errs = append(errs, fmt.Errorf("lock: epoch %d is not a positive SOURCE_DATE_EPOCH", l.Epoch))
	}
	seen := map[string]bool{}
	for _, p := range l.Packages {
		if err := p.Validate(); err != nil {
			errs = append(errs, err)
		}
		if p.Path == "" {
			errs = append(errs, fmt.Errorf("lock: package %s has no archive path", p.Name))
		}
		if seen[p.Name] {
			errs = append(errs, fmt.Errorf("lock: package %s listed twice", p.Name))
		}
		seen[p.Name] = true
	}
	for _, inc := range l.Include {
		if !seen[inc] {
			errs = append(errs, fmt.Errorf("lock: included package %s is not in the closure", inc))
		}
	}
	if !sort.SliceIsSorted(l.Packages, func(i, j int) bool { return l.Packages[i].Name < l.Packages[j].Name }) {
		errs = append(errs, errors.New("lock: packages not sorted by name"))
	}
	return errors.Join(errs...)
}

// Package returns the locked package called name.
func (l Lock) Package(name string) (debian.Package, bool) {
	for _, p := range l.Packages {
		if p.Name == name {
			return p, true
		}
	}
	return debian.Package{}, false
}

// Marshal returns the lock's canonical JSON (indented, one package a line
// group, trailing newline): what LockFile holds and ID hashes.
func (l Lock) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// LoadLock reads and validates a lock file. Unknown fields are errors.
func LoadLock(path string) (Lock, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Lock{}, fmt.Errorf("load lock: %w", err)
	}
	return ParseLock(b)
}

// ParseLock decodes and validates a lock.
func ParseLock(b []byte) (Lock, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var l Lock
	if err := dec.Decode(&l); err != nil {
		return Lock{}, fmt.Errorf("parse lock: %w", err)
	}
	if err := l.Validate(); err != nil {
		return Lock{}, fmt.Errorf("parse lock: %w", err)
	}
	return l, nil
}

// WriteLock writes l to path atomically (fsync of file and directory).
func WriteLock(path string, l Lock) error {
	if err := l.Validate(); err != nil {
		return fmt.Errorf("write lock: %w", err)
	}
	b, err := l.Marshal()
	if err != nil {
		return fmt.Errorf("write lock: %w", err)
	}
	return renameio.WriteFile(path, b, 0o644)
}
