package keyfile

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// OpenOption configures Open.
type OpenOption func(*openConfig) error

type openConfig struct {
	verify, requireChecked, populate bool
	onBreak                          func(*Key) // Leased
}

// Populate faults the whole mapping in when it is made (MAP_POPULATE on
// Linux; elsewhere nothing), from the page cache or the disk, in one call
// instead of one fault per touched page later: for a key that is about to
// be read whole, as an upload to the GPU reads it. The mapped pages then
// count in the process's resident set (they remain the page cache's).
func Populate() OpenOption {
	return func(c *openConfig) error { c.populate = true; return nil }
}

// SkipVerify opens without hashing the sections: only the header's own
// checksum is checked. It is for a file whose sections were verified
// before (by an earlier Open of the same, unchanged file); a flipped bit
// in a point then goes unnoticed until Verify rejects the proof.
func SkipVerify() OpenOption {
	return func(c *openConfig) error { c.verify = false; return nil }
}

// RequireChecked refuses a file written without FlagChecked.
func RequireChecked() OpenOption {
	return func(c *openConfig) error { c.requireChecked = true; return nil }
}

// Key is a proving key mapped from a raw key file. PK's point slices and
// infinity masks are read-only views of the mapping: PK is safe for any
// number of concurrent provers (Prove only reads a key), and must not be
// written to (the pages are mapped read-only: a write faults). Close
// unmaps them; no one may use PK, or any slice taken from it, after that.
// The file must not be truncated or written in place while mapped, unless
// the key holds a lease (Leased); a replacement through renameio, as Write
// does, is always safe: the mapping keeps the old file. Only Close
// releases the mapping: PK does not keep its Key alive, so the garbage
// collector must not be left to do it.
type Key struct {
	PK     *groth16.ProvingKey
	Header Header
	Path   string

	mu    sync.Mutex
	data  []byte      // the mapping; nil once closed
	file  *os.File    // the mapped file, held open for Check; nil once closed
	lease *leaseState // Leased; nil without
}

// Open maps the raw key file at path and returns its key without decoding
// it: the header is parsed and checked, every section's SHA-256 is checked
// (unless SkipVerify; the sections are hashed concurrently), the infinity
// masks are checked to hold only 0 and 1 and to agree with the counts of A
// and B. The points are not checked on the curve or in the subgroup: that
// was done once when the file was written, as Header.Checked reports. A
// damaged file is an *Error naming path, the section and the problem.
func Open(path string, opts ...OpenOption) (*Key, error) {
	cfg := openConfig{verify: true}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, &Error{Path: path, Err: err}
		}
	}
	if err := hostOK(); err != nil {
		return nil, &Error{Path: path, Err: err}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open key file: %w", err)
	}
	k, err := openFile(path, f, cfg)
	if err != nil {
		_ = f.Close() // read-only: the error to report is the one above
		return nil, err
	}
	return k, nil
}

// openFile maps f and builds its key, which keeps f open (Check). With
// Leased, the lease is taken before the file is mapped and read, so that
// what is checked is what the key keeps.
func openFile(path string, f *os.File, cfg openConfig) (*Key, error) {
	var lease *leaseState
	if cfg.onBreak != nil {
		lease = &leaseState{onBreak: cfg.onBreak}
		if mapsFile {
			lease.err = takeLease(f)
			lease.held = lease.err == nil
		}
	}
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("open key file: %w", err)
	}
	if st.Size() < Align {
		return nil, &Error{Path: path, Section: "header", Err: fmt.Errorf("%w: %d bytes, the header alone takes %d", ErrTruncated, st.Size(), Align)}
	}
	data, err := mapFile(f, st.Size(), cfg.populate)
	if err != nil {
		return nil, &Error{Path: path, Err: err}
	}
	var k *Key
	if ferr := guardFaults(func() { k, err = newKey(path, data, st.Size(), cfg) }); ferr != nil {
		err = &Error{Path: path, Err: ferr}
	}
	if err == nil && lease != nil && lease.held && leaseBreaking(f) {
		err = &Error{Path: path, Err: fmt.Errorf("%w: another process opened it for writing or truncated it while it was loaded", ErrChanged)}
	}
	if err != nil {
		_ = unmapFile(data) // the damage is the error to report
		return nil, err
	}
	k.file, k.lease = f, lease
	if lease != nil && lease.held {
		watch(k) // a break from now on is seen by the watcher's next poll
	}
	return k, nil
}

// newKey checks the mapped file and builds the key over it.
func newKey(path string, data []byte, size int64, cfg openConfig) (*Key, error) {
	h, err := ParseHeader(data[:Align], size)
	if err != nil {
		return nil, pathErr(path, err)
	}
	if cfg.requireChecked && !h.Checked() {
		return nil, &Error{Path: path, Section: "header", Err: fmt.Errorf("%w: written without point checks (FlagChecked)", ErrCorrupt)}
	}
	var secs [nbSections][]byte
	for i, s := range h.Sections {
		secs[i] = data[s.Offset : s.Offset+s.Length : s.Offset+s.Length]
		if p := uintptr(unsafe.Pointer(unsafe.SliceData(data))) + uintptr(s.Offset); p%Align != 0 {
			return nil, &Error{Path: path, Section: SectionID(i).String(), Err: fmt.Errorf("%w: mapped at %#x", ErrAlignment, p)}
		}
	}
	if cfg.verify {
		if err := verifySums(h, secs); err != nil {
			return nil, pathErr(path, err)
		}
	}
	pk, err := build(h, secs)
	if err != nil {
		return nil, pathErr(path, err)
	}
	return &Key{PK: pk, Header: *h, Path: path, data: data}, nil
}

func pathErr(path string, err error) error {
	if he, ok := errors.AsType[*headerErr](err); ok {
		return &Error{Path: path, Section: he.section, Err: he.err}
	}
	return &Error{Path: path, Err: err}
}

// verifySums hashes the sections on all cores and compares the sums.
func verifySums(h *Header, secs [nbSections][]byte) error {
	got, err := sumGuarded(secs, h.HashChunk)
	if err != nil {
		return err
	}
	for i, s := range h.Sections {
		if got[i] != s.Sum {
			return &headerErr{SectionID(i).String(), fmt.Errorf("%w: sha256 %s, header says %s", ErrChecksum, got[i], s.Sum)}
		}
	}
	return nil
}

// build makes the key's fields views of the sections.
func build(h *Header, secs [nbSections][]byte) (*groth16.ProvingKey, error) {
	pk := &groth16.ProvingKey{DomainSize: int(h.DomainSize), NbPublic: int(h.NbPublic), NbPrivate: int(h.NbPrivate)}
	s := (*small)(unsafe.Pointer(unsafe.SliceData(secs[SecSmall])))
	pk.G1.Alpha, pk.G1.Beta, pk.G1.Delta, pk.G2.Beta, pk.G2.Delta = s.G1Alpha, s.G1Beta, s.G1Delta, s.G2Beta, s.G2Delta
	for _, m := range []struct {
		id, points SectionID
	}{{SecInfA, SecA}, {SecInfB, SecB1}} {
		finite, err := maskCount(secs[m.id])
		if err != nil {
			return nil, &headerErr{m.id.String(), err}
		}
		if uint64(finite) != h.Sections[m.points].Count {
			return nil, corrupt(m.id.String(), "%d finite points, section %s has %d", finite, m.points, h.Sections[m.points].Count)
		}
	}
	pk.InfinityA, pk.InfinityB = viewOf[bool](secs[SecInfA]), viewOf[bool](secs[SecInfB])
	pk.G1.A, pk.G1.B = viewOf[bls12381.G1Affine](secs[SecA]), viewOf[bls12381.G1Affine](secs[SecB1])
	pk.G2.B = viewOf[bls12381.G2Affine](secs[SecB2])
	pk.SetLH(viewOf[bls12381.G1Affine](secs[SecLH]))
	return pk, nil
}

// maskCount checks that every byte of an infinity mask is 0 or 1 (the only
// bytes a Go bool may hold) and counts the zeros (the finite points).
func maskCount(b []byte) (int, error) {
	n := 0
	for i, v := range b {
		if v > 1 {
			return 0, fmt.Errorf("%w: byte %d is %d, want 0 or 1", ErrCorrupt, i, v)
		}
		n += int(v ^ 1)
	}
	return n, nil
}

// Verify hashes the mapped sections (concurrently) and compares them with
// the header's sums: what Open does unless SkipVerify, for a caller that
// decides after opening. A mismatch is an *Error naming the section. It
// only reads the mapping and is safe concurrently with provers using PK
// and with other Verifys; it must not run concurrently with Close.
func (k *Key) Verify() error {
	k.mu.Lock()
	data := k.data
	k.mu.Unlock()
	if data == nil {
		return &Error{Path: k.Path, Err: errors.New("verify: key is closed")}
	}
	var secs [nbSections][]byte
	for i, s := range k.Header.Sections {
		secs[i] = data[s.Offset : s.Offset+s.Length]
	}
	if err := verifySums(&k.Header, secs); err != nil {
		return pathErr(k.Path, err)
	}
	return nil
}

// Check reports whether the key can be read whole: the mapped file is
// still as long as its header says, or the key reads a private copy of it
// (Leased). A file truncated after it was mapped is an *Error wrapping
// ErrTruncated, naming the file (touching a page past its new end would
// raise SIGBUS); a leased file that another process is waiting to change,
// with no private copy made, is one wrapping ErrChanged (Changed). It asks
// the open descriptor, so a file replaced by a rename (the mapping keeps
// the old one) is not mistaken for it. Cheap (one fstat): for a caller
// about to read the mapping, such as a prover.
func (k *Key) Check() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.file == nil {
		return &Error{Path: k.Path, Err: errors.New("check: key is closed")}
	}
	if l := k.lease; l != nil && l.changed != nil {
		if l.private {
			return nil // no page of the file is read any longer
		}
		return l.changed
	}
	st, err := k.file.Stat()
	if err != nil {
		return &Error{Path: k.Path, Err: err}
	}
	if uint64(st.Size()) < k.Header.FileSize {
		return &Error{Path: k.Path, Err: fmt.Errorf("%w after it was mapped: %d bytes now, %d when mapped", ErrTruncated, st.Size(), k.Header.FileSize)}
	}
	return nil
}

// Close unmaps the key and closes its file, which releases its lease
// (Leased). It must not be called while PK is in use; a second Close does
// nothing. It is safe to call concurrently with itself, and waits for a
// private copy being made (Leased).
func (k *Key) Close() error {
	if k.lease != nil {
		k.lease.convert.Lock()
		defer k.lease.convert.Unlock()
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.data == nil {
		return nil
	}
	data, f := k.data, k.file
	k.data, k.file = nil, nil
	if k.lease != nil && k.lease.held {
		unwatch(k)
	}
	_ = f.Close() // read-only: nothing to report
	if err := unmapFile(data); err != nil {
		return fmt.Errorf("close key file %s: %w", k.Path, err)
	}
	return nil
}
