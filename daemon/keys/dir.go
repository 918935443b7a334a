package keys

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile"
)

// The key directory holds, per key, production files <name>.pk, .vk and
// .rawpk (put there by an operator: never deleted by the daemon) and
// development files <name>-setup<seed>-<shape id>.pk, .vk and .rawpk
// (written by prover/groth16/devkeys: generated again when missing).
// Writes go through internal/renameio, whose temporary files are
// .<file>.tmp<digits>.

var (
	devFile  = regexp.MustCompile(`^(.+-setup\d+-[0-9a-f]{24})\.(pk|vk|rawpk)$`)
	prodFile = regexp.MustCompile(`^(.+)\.(pk|vk|rawpk)$`)
	tempFile = regexp.MustCompile(`^\..+\.tmp\d*$`)
)

// KeyFiles is one key's files in the key directory.
type KeyFiles struct {
	Name        string // the file name without its extension
	Development bool
	Paths       []string // sorted
	Bytes       int64
	LastUsed    time.Time // the latest access time of its files (the manager sets it at every load)
}

// RawKeyFile is the raw key file of key in dir that a load would map:
// the production one (<name>.rawpk), else a development one (the newest,
// when setups of several seeds or shapes lie there); "" when dir holds
// none or cannot be read.
func RawKeyFile(dir, key string) string {
	all, err := ListDir(dir)
	if err != nil {
		return ""
	}
	name := FileName(key)
	var newest string
	var at time.Time
	for _, k := range all {
		if k.Name != name && !(k.Development && strings.HasPrefix(k.Name, name+"-setup")) {
			continue
		}
		for _, p := range k.Paths {
			if !strings.HasSuffix(p, RawExt) {
				continue
			}
			if !k.Development {
				return p
			}
			if st, err := os.Stat(p); err == nil && (newest == "" || st.ModTime().After(at)) {
				newest, at = p, st.ModTime()
			}
		}
	}
	return newest
}

// keyEntry reports whether a directory entry may be a key file: not hidden
// (renameio's temporary files are), and a regular file or a symbolic link
// (to one, or dangling: a load would follow it, so ListDir lists it, and
// VerifyKey reports a dangling one; a link to a directory is no key).
func keyEntry(ent fs.DirEntry) bool {
	if strings.HasPrefix(ent.Name(), ".") {
		return false
	}
	return ent.Type().IsRegular() || ent.Type()&fs.ModeSymlink != 0
}

// ErrProduction refuses to delete production key files without force.
var ErrProduction = errors.New("production key files are never deleted by the daemon")

// ListDir returns the keys whose files lie in dir, by name.
func ListDir(dir string) ([]KeyFiles, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("key directory: %w", err)
	}
	byName := map[string]*KeyFiles{}
	for _, ent := range ents {
		if !keyEntry(ent) {
			continue
		}
		name, dev := "", false
		if m := devFile.FindStringSubmatch(ent.Name()); m != nil {
			name, dev = m[1], true
		} else if m := prodFile.FindStringSubmatch(ent.Name()); m != nil {
			name = m[1]
		} else {
			continue
		}
		path := filepath.Join(dir, ent.Name())
		st, err := os.Stat(path) // a symbolic link's target: what a load reads
		switch {
		case err != nil && ent.Type()&fs.ModeSymlink == 0:
			continue // removed meanwhile
		case err == nil && !st.Mode().IsRegular():
			continue // a link to a directory or a device
		}
		k := byName[name]
		if k == nil {
			k = &KeyFiles{Name: name, Development: dev}
			byName[name] = k
		}
		k.Paths = append(k.Paths, path)
		if err != nil {
			continue // a dangling link: listed, so that verify names it
		}
		k.Bytes += st.Size()
		if a := accessTime(st); a.After(k.LastUsed) {
			k.LastUsed = a
		}
	}
	out := make([]KeyFiles, 0, len(byName))
	for _, k := range byName {
		sort.Strings(k.Paths)
		out = append(out, *k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// RemoveKey deletes the files of key name from dir. Production files are
// refused unless force.
func RemoveKey(dir, name string, force bool) ([]string, error) {
	all, err := ListDir(dir)
	if err != nil {
		return nil, err
	}
	for _, k := range all {
		if k.Name != name {
			continue
		}
		if !k.Development && !force {
			return nil, fmt.Errorf("remove %s: %w (force to delete them)", name, ErrProduction)
		}
		var errs []error
		for _, p := range k.Paths {
			errs = append(errs, os.Remove(p))
		}
		return k.Paths, errors.Join(errs...)
	}
	return nil, fmt.Errorf("remove %s: no key of that name in %s", name, dir)
}

// Check is one key file's verification.
type Check struct {
	Path string
	Used bool  // the file a load reads: .rawpk when present, else .pk (and .vk)
	Err  error // nil: sound
}

// VerifyKey checks every file of k: a raw key file's section hashes, a
// .pk's and a .vk's every point (decoded as a load would decode them), and
// that the proving key a load uses and the .vk are one pair (one setup's
// fingerprint, as many public inputs: keyfile.CheckPair), which is
// reported on the .vk. Both a .pk and a .rawpk are checked: a load uses
// the .rawpk and never reads the .pk, which must not rot unnoticed beside
// it.
func VerifyKey(k KeyFiles) []Check {
	raw := false
	for _, p := range k.Paths {
		raw = raw || strings.HasSuffix(p, RawExt)
	}
	var out []Check
	var used *groth16.ProvingKey // the proving key a load uses, when sound
	var usedPath string
	vkAt := -1
	var vk *groth16.VerifyingKey
	for _, p := range k.Paths {
		c := Check{Path: p}
		switch filepath.Ext(p) {
		case RawExt:
			var pk *groth16.ProvingKey
			c.Used = true
			pk, c.Err = verifyRaw(p)
			used, usedPath = pk, p
		case ".pk":
			pk := new(groth16.ProvingKey)
			c.Used, c.Err = !raw, readFile(p, pk)
			if c.Used && c.Err == nil {
				used, usedPath = pk, p
			}
		case ".vk":
			v := new(groth16.VerifyingKey)
			c.Used, c.Err = true, readFile(p, v)
			if c.Err == nil {
				vk, vkAt = v, len(out)
			}
		}
		out = append(out, c)
	}
	if used != nil && vk != nil {
		out[vkAt].Err = keyfile.CheckPair(usedPath, used, out[vkAt].Path, vk)
	}
	return out
}

// verifyRaw hashes a raw key file's sections and returns its proving key's
// setup points (a copy: the file is unmapped before it returns).
func verifyRaw(path string) (*groth16.ProvingKey, error) {
	k, err := keyfile.Open(path, keyfile.SkipVerify())
	if err != nil {
		return nil, err
	}
	pk := &groth16.ProvingKey{NbPublic: k.PK.NbPublic, NbPrivate: k.PK.NbPrivate, DomainSize: k.PK.DomainSize}
	pk.G1.Alpha, pk.G2.Beta, pk.G2.Delta = k.PK.G1.Alpha, k.PK.G2.Beta, k.PK.G2.Delta
	if err := errors.Join(k.Verify(), k.Close()); err != nil {
		return nil, err
	}
	return pk, nil
}

// removeTemp deletes renameio's temporary files in dir that no writer can
// still be writing: all of them when alone (no other daemon shares dir),
// else those not written for stale. It returns the paths removed.
func removeTemp(dir string, alone bool, stale time.Duration, now time.Time) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("key directory: %w", err)
	}
	var removed []string
	var errs []error
	for _, ent := range ents {
		if !ent.Type().IsRegular() || !tempFile.MatchString(ent.Name()) {
			continue
		}
		info, err := ent.Info()
		if err != nil {
			continue // removed meanwhile
		}
		if !alone && now.Sub(info.ModTime()) < stale {
			continue
		}
		p := filepath.Join(dir, ent.Name())
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}

// touch records a load of path's key: its access time is set to now. The
// modification time, which the raw key file's verification remembers, is
// not written at all (a zero time leaves it as it is): written back as it
// was read, it could undo the new time of a file replaced in between, and
// a changed file would pass as the one verified before. Errors are
// ignored: a missing file is reported by the load that reads it, and in a
// read-only directory the LRU order falls back to the last write.
func touch(path string, now time.Time) {
	_ = os.Chtimes(path, now, time.Time{})
}

// trimDir deletes the least recently used development keys' files until
// the key directory's files fit DirBudget, sparing the keys this manager
// holds and every production file. It returns what it deleted.
func (m *Manager) trimDir() ([]string, error) {
	if m.cfg.DirBudget <= 0 {
		return nil, nil
	}
	all, err := ListDir(m.cfg.Dir)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, k := range all {
		total += k.Bytes
	}
	sort.Slice(all, func(i, j int) bool { return all[i].LastUsed.Before(all[j].LastUsed) })
	m.mu.Lock()
	held := map[string]bool{}
	for key := range m.entries {
		held[FileName(key)] = true
	}
	m.mu.Unlock()
	var removed []string
	var errs []error
	for _, k := range all {
		if total <= m.cfg.DirBudget {
			break
		}
		if !k.Development || held[devShape(k.Name)] {
			continue
		}
		for _, p := range k.Paths {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
				continue
			}
			removed = append(removed, p)
		}
		total -= k.Bytes
		m.cfg.Log.Info("development key files deleted: the key directory is over its budget", "key", k.Name,
			"freed_bytes", k.Bytes, "last_used", k.LastUsed, "budget", m.cfg.DirBudget)
	}
	if total > m.cfg.DirBudget {
		m.cfg.Log.Warn("key directory over its budget: what is left is production keys or keys in use", "bytes", total,
			"budget", m.cfg.DirBudget)
	}
	return removed, errors.Join(errs...)
}
