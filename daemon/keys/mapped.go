package keys

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// RawExt is the extension of a raw key file (prover/groth16/keyfile) in the
// key directory: <name>.rawpk beside <name>.vk is mapped instead of
// decoding <name>.pk.
const RawExt = devkeys.RawExt

// verifiedFile is what the manager remembers of a raw key file whose
// sections it has hashed: the file's size and modification time, and the
// header's sums, so an unchanged file is not hashed again when its key
// comes back from cold.
type verifiedFile struct {
	size int64
	mod  time.Time
	sums [len(keyfile.Header{}.Sections)]keyfile.Sum
}

// mapOptions are the options every raw key file is mapped with: leased
// (keyfile.Leased), so that another process truncating or rewriting the
// file while a proof reads it changes nothing for the proof (the key is
// copied into private memory first, or, short of memory, kept on the file
// until its jobs end), and the key then goes cold (fileChanged).
func (m *Manager) mapOptions() []keyfile.OpenOption {
	return []keyfile.OpenOption{keyfile.SkipVerify(), keyfile.Populate(), keyfile.Leased(m.fileChanged)}
}

// warnUnleased logs, once per load, that k's file could not be leased.
func (m *Manager) warnUnleased(key string, k *keyfile.Key) {
	if err := k.LeaseErr(); err != nil {
		m.cfg.Log.Warn("key file not leased: a truncation of this file while a proof reads it ends the daemon", "key", key, "path", k.Path, "err", err)
	}
}

// readRaw maps a production raw key file and reads its verifying key.
func (m *Manager) readRaw(e *entry, rawPath, vkPath string) error {
	start := m.now()
	k, err := keyfile.Open(rawPath, m.mapOptions()...)
	if err != nil {
		return err
	}
	mapped := m.now().Sub(start)
	m.warnUnleased(e.key, k)
	vk := new(groth16.VerifyingKey)
	err = readFile(vkPath, vk)
	if err == nil {
		err = keyfile.CheckPair(rawPath, k.PK, vkPath, vk)
	}
	var hashed time.Duration
	if err == nil {
		hashed, err = m.verifyOnce(k)
	}
	if err == nil {
		err = fits(rawPath, k.PK, e)
	}
	if err != nil {
		return errors.Join(err, k.Close())
	}
	e.pk, e.vk, e.mapped = k.PK, vk, k
	m.cfg.Log.Info("key file mapped", "key", e.key, "path", rawPath, "map", mapped, "verify", hashed)
	return nil
}

// readDevMapped maps the development raw key file when there is one; ok is
// false when it is absent or damaged (the setup's files then replace it).
func (m *Manager) readDevMapped(e *entry, name string, full *r1cs.System) (ok bool) {
	err := m.mapDev(e, name, full)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		m.cfg.Log.Warn("development raw key file not used; rewriting it", "key", e.key, "err", err)
	}
	return err == nil
}

// mapDev maps the development raw key file of e into e, checked against its
// verifying key and hashed (once per manager and unchanged file).
func (m *Manager) mapDev(e *entry, name string, full *r1cs.System) error {
	k, vk, info, err := devkeys.Mapped(m.cfg.Dir, name, full, m.cfg.DevSeed, m.mapOptions()...)
	if err != nil {
		return err
	}
	m.warnUnleased(e.key, k)
	var hashed time.Duration
	if err = keyfile.CheckPair(info.RawPath, k.PK, info.VKPath, vk); err == nil {
		hashed, err = m.verifyOnce(k)
	}
	if err != nil {
		return errors.Join(err, k.Close())
	}
	e.pk, e.vk, e.dev, e.mapped = k.PK, vk, true, k
	m.cfg.Log.Info("development key mapped (NOT for production)", "key", e.key, "path", info.RawPath, "load", info.Load,
		"verify", hashed)
	if pk := strings.TrimSuffix(info.RawPath, RawExt) + ".pk"; fileExists(pk) {
		m.checkUnused(pk, info.RawPath, true)
	}
	return nil
}

// verifyOnce hashes k's sections unless this manager has hashed the same,
// unchanged file before, and returns how long the hashing took (0: not
// hashed again).
func (m *Manager) verifyOnce(k *keyfile.Key) (time.Duration, error) {
	st, err := os.Stat(k.Path)
	if err != nil {
		return 0, fmt.Errorf("verify %s: %w", k.Path, err)
	}
	v := verifiedFile{size: st.Size(), mod: st.ModTime()}
	for i, s := range k.Header.Sections {
		v.sums[i] = s.Sum
	}
	m.mu.Lock()
	seen, ok := m.verified[k.Path]
	m.mu.Unlock()
	if ok && seen.size == v.size && seen.mod.Equal(v.mod) && seen.sums == v.sums {
		return 0, nil
	}
	start := m.now()
	if err := k.Verify(); err != nil {
		return 0, err
	}
	took := m.now().Sub(start)
	m.mu.Lock()
	m.verified[k.Path] = v
	m.mu.Unlock()
	return took, nil
}

// fits checks that pk was made for e's circuit.
func fits(path string, pk *groth16.ProvingKey, e *entry) error {
	if pk.NbPublic != e.sys.NbPublic || pk.NbPrivate != e.sys.NbPrivate || pk.DomainSize != e.sys.DomainSize() {
		return fmt.Errorf("%s does not fit the circuit (%d public, %d private, domain %d; circuit %d, %d, %d)",
			path, pk.NbPublic, pk.NbPrivate, pk.DomainSize, e.sys.NbPublic, e.sys.NbPrivate, e.sys.DomainSize())
	}
	return nil
}

// fileDamagedLocked checks e's mapped key file, if any
// (keyfile.Key.Check): a file truncated after it was mapped fails the
// caller, naming the file, before anything reads past its new end (a
// SIGBUS), and the key goes cold at its last release, so that the next load
// maps the file again or reports what is wrong with it. A new user
// (Acquire) is also refused a key whose file another process changed while
// it was leased (keyfile.Key.Changed), even one that reads a private copy
// and serves its holders whole: so that the key drains, goes cold, and the
// next load reads the file as it is now. The caller holds m.mu and a
// reference to e.
func (m *Manager) fileDamagedLocked(e *entry, newUser bool) error {
	if e.mapped == nil {
		return nil
	}
	err := e.mapped.Check()
	if err == nil && newUser {
		err = e.mapped.Changed()
	}
	if err == nil {
		return nil
	}
	if e.evictAsked == 0 || Cold < e.evictAsked {
		e.evictAsked = Cold
	}
	m.cfg.Log.Error("key file changed under its mapping: the key goes cold once its jobs end", "key", e.key, "err", err)
	return fmt.Errorf("key %s: %w", e.key, err)
}

// fileChanged is keyfile.Leased's notice that another process opened k's
// file for writing or truncated it: k now reads a private copy of what was
// verified (or, short of memory, still the file, whose change waits for
// the key's lease, released when the key is unmapped). The key goes cold
// now if no one holds it, else at its last release; until then new users
// are refused (fileDamagedLocked).
func (m *Manager) fileChanged(k *keyfile.Key) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var e *entry
	for _, x := range m.entries {
		if x.mapped == k {
			e = x
			break
		}
	}
	if e == nil {
		// Still loading (the load's Acquire finds k.Changed), or gone.
		m.cfg.Log.Error("key file changed under its mapping", "path", k.Path, "err", k.Changed())
		return
	}
	m.cfg.Log.Error("key file changed under its mapping: the key goes cold once its jobs end", "key", e.key, "path", k.Path, "jobs", e.refs, "err", k.Changed())
	if e.refs > 0 || !isReady(e) {
		if e.evictAsked == 0 || Cold < e.evictAsked {
			e.evictAsked = Cold
		}
		return
	}
	if err := m.dropLocked(e, Cold); err != nil {
		m.cfg.Log.Warn("key eviction after its file changed failed", "key", e.key, "err", err)
	}
}

// unmapLocked releases e's mapped key file, if any. The caller holds m.mu
// and e has no users (its proving key is unreachable from then on).
func (m *Manager) unmapLocked(e *entry) error {
	if e.mapped == nil {
		return nil
	}
	k := e.mapped
	e.mapped = nil
	if err := k.Close(); err != nil {
		return fmt.Errorf("unmap %s: %w", e.key, err)
	}
	return nil
}
