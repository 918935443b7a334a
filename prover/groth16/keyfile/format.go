package keyfile

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
)

// Format constants.
const (
	// Version is the format version this package writes and reads.
	Version uint32 = 1
	// Align is the alignment of every section (and the header's size).
	Align = 4096
	// HashChunk is the size of the pieces a section is hashed in: a
	// section's Sum is the SHA-256 of the SHA-256s of its HashChunk-byte
	// pieces (the last one shorter), so that all cores can verify one
	// large section at once.
	HashChunk = 64 << 20
	// FlagChecked records that every point was checked on the curve and in
	// the prime-order subgroup when the file was written.
	FlagChecked uint32 = 1 << 0

	curveBLS12381 uint32 = 0x0381 // the compressed encoding's curve id
	knownFlags           = FlagChecked
	nbSections           = 7
	sectionEntry         = 64 // id, elem size, count, offset, length, sum
	tableStart           = 64
	headerUsed           = tableStart + nbSections*sectionEntry + sha256.Size
	maxPoints            = 1 << 31 // as the compressed encoding

	g1Size    = int(unsafe.Sizeof(bls12381.G1Affine{}))
	g2Size    = int(unsafe.Sizeof(bls12381.G2Affine{}))
	smallSize = 3*g1Size + 2*g2Size
)

var magic = [8]byte{'C', 'U', 'Z', 'K', 'R', 'A', 'W', 'K'}

// The sizes the format fixes: a build where gnark-crypto's points are laid
// out otherwise fails to compile here.
var (
	_ [g1Size - 96]struct{}
	_ [96 - g1Size]struct{}
	_ [g2Size - 192]struct{}
	_ [192 - g2Size]struct{}
)

// SectionID names a section of the file.
type SectionID uint32

// The sections, in file order.
const (
	SecSmall SectionID = iota
	SecInfA
	SecInfB
	SecA
	SecB1
	SecLH
	SecB2
)

var sectionNames = [nbSections]string{"small", "InfinityA", "InfinityB", "A", "B1", "L‖H", "B2"}

// elemSizes is each section's element size in bytes.
var elemSizes = [nbSections]uint32{uint32(smallSize), 1, 1, uint32(g1Size), uint32(g1Size), uint32(g1Size), uint32(g2Size)}

func (s SectionID) String() string {
	if int(s) < nbSections {
		return sectionNames[s]
	}
	return fmt.Sprintf("section(%d)", uint32(s))
}

// Sum is a section's checksum: the SHA-256 of its pieces' SHA-256s.
type Sum [sha256.Size]byte

func (s Sum) String() string { return hex.EncodeToString(s[:]) }

// Section is one entry of the header's section table.
type Section struct {
	ID       SectionID
	ElemSize uint32 // bytes per element
	Count    uint64 // elements
	Offset   uint64 // from the start of the file; a multiple of Align
	Length   uint64 // Count × ElemSize bytes
	Sum      Sum    // SHA-256 over the SHA-256s of the HashChunk-byte pieces of the Length bytes at Offset
}

// Header is a key file's header: the key's shape, the flags and the
// section table.
type Header struct {
	Version    uint32
	Flags      uint32
	DomainSize uint64
	NbPublic   uint64
	NbPrivate  uint64
	FileSize   uint64
	HashChunk  uint64 // bytes per hashed piece of a section
	Sections   [nbSections]Section
}

// Checked reports whether the points were checked when the file was
// written (FlagChecked).
func (h *Header) Checked() bool { return h.Flags&FlagChecked != 0 }

// PointBytes is the bytes of the key's point sections (A, B1, L‖H, B2).
func (h *Header) PointBytes() uint64 {
	return h.Sections[SecA].Length + h.Sections[SecB1].Length + h.Sections[SecLH].Length + h.Sections[SecB2].Length
}

// Errors, wrapped in an *Error naming the file and the section.
var (
	ErrFormat    = errors.New("not a raw proving-key file (bad magic)")
	ErrVersion   = errors.New("unsupported raw key file version")
	ErrCurve     = errors.New("raw key file is for another curve")
	ErrTruncated = errors.New("file is truncated")
	ErrAlignment = errors.New("misaligned section")
	ErrChecksum  = errors.New("checksum mismatch (corrupted data)")
	ErrCorrupt   = errors.New("malformed raw key file")
	ErrHost      = errors.New("raw key files need a little-endian 64-bit host")
)

// Error is a damaged or unreadable key file: Path names the file, Section
// the part of it ("header" or a section's name, "" for the whole file).
type Error struct {
	Path, Section string
	Err           error
}

func (e *Error) Error() string {
	if e.Section == "" {
		return fmt.Sprintf("key file %s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("key file %s: section %s: %v", e.Path, e.Section, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// headerErr is an error about the header or a section, before the path is
// known.
type headerErr struct {
	section string
	err     error
}

func (e *headerErr) Error() string { return e.section + ": " + e.err.Error() }
func (e *headerErr) Unwrap() error { return e.err }

func corrupt(section, format string, args ...any) error {
	return &headerErr{section, fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))}
}

// alignUp rounds n up to a multiple of Align.
func alignUp(n uint64) uint64 { return (n + Align - 1) &^ (Align - 1) }

// encodeHeader returns the header page.
func encodeHeader(h *Header) []byte {
	b := make([]byte, Align)
	le := binary.LittleEndian
	copy(b, magic[:])
	le.PutUint32(b[8:], h.Version)
	le.PutUint32(b[12:], curveBLS12381)
	le.PutUint32(b[16:], h.Flags)
	le.PutUint32(b[20:], nbSections)
	le.PutUint64(b[24:], h.DomainSize)
	le.PutUint64(b[32:], h.NbPublic)
	le.PutUint64(b[40:], h.NbPrivate)
	le.PutUint64(b[48:], h.FileSize)
	le.PutUint64(b[56:], h.HashChunk)
	for i, s := range h.Sections {
		e := b[tableStart+i*sectionEntry:]
		le.PutUint32(e[0:], uint32(s.ID))
		le.PutUint32(e[4:], s.ElemSize)
		le.PutUint64(e[8:], s.Count)
		le.PutUint64(e[16:], s.Offset)
		le.PutUint64(e[24:], s.Length)
		copy(e[32:], s.Sum[:])
	}
	sum := sha256.Sum256(b[:headerUsed-sha256.Size])
	copy(b[headerUsed-sha256.Size:], sum[:])
	return b
}

// ParseHeader decodes and checks a header page against the file's size:
// magic, version, curve, flags, the header's own checksum, every section's
// place (aligned, in order, inside the file) and every count against the
// shape. It never panics, whatever b holds. The errors match ErrFormat,
// ErrVersion, ErrCurve, ErrTruncated, ErrAlignment, ErrChecksum or
// ErrCorrupt.
func ParseHeader(b []byte, fileSize int64) (*Header, error) {
	if len(b) < headerUsed || fileSize < Align {
		return nil, &headerErr{"header", fmt.Errorf("%w: %d-byte header in a %d-byte file, the header page alone takes %d", ErrTruncated, len(b), fileSize, Align)}
	}
	le := binary.LittleEndian
	switch {
	case [8]byte(b[:8]) != magic:
		return nil, &headerErr{"header", fmt.Errorf("%w: magic %q, want %q", ErrFormat, b[:8], magic[:])}
	case le.Uint32(b[8:]) != Version:
		return nil, &headerErr{"header", fmt.Errorf("%w: %d (this build reads %d)", ErrVersion, le.Uint32(b[8:]), Version)}
	case le.Uint32(b[12:]) != curveBLS12381:
		return nil, &headerErr{"header", fmt.Errorf("%w: curve id %#04x, want BLS12-381 (%#04x)", ErrCurve, le.Uint32(b[12:]), curveBLS12381)}
	}
	if sum := sha256.Sum256(b[:headerUsed-sha256.Size]); string(sum[:]) != string(b[headerUsed-sha256.Size:headerUsed]) {
		return nil, &headerErr{"header", ErrChecksum}
	}
	h := &Header{Version: Version, Flags: le.Uint32(b[16:]), DomainSize: le.Uint64(b[24:]),
		NbPublic: le.Uint64(b[32:]), NbPrivate: le.Uint64(b[40:]), FileSize: le.Uint64(b[48:]), HashChunk: le.Uint64(b[56:])}
	if h.Flags&^knownFlags != 0 {
		return nil, corrupt("header", "unknown flags %#x", h.Flags&^knownFlags)
	}
	if c := h.HashChunk; c < Align || c > 1<<40 || bits.OnesCount64(c) != 1 {
		return nil, corrupt("header", "hash piece of %d bytes, want a power of two from %d to 2^40", c, Align)
	}
	if n := le.Uint32(b[20:]); n != nbSections {
		return nil, corrupt("header", "%d sections, want %d", n, nbSections)
	}
	if h.FileSize != uint64(fileSize) {
		if uint64(fileSize) < h.FileSize {
			return nil, &headerErr{"header", fmt.Errorf("%w: %d bytes, the header says %d", ErrTruncated, fileSize, h.FileSize)}
		}
		return nil, corrupt("header", "file has %d bytes, the header says %d", fileSize, h.FileSize)
	}
	for i := range h.Sections {
		e := b[tableStart+i*sectionEntry:]
		h.Sections[i] = Section{ID: SectionID(le.Uint32(e[0:])), ElemSize: le.Uint32(e[4:]),
			Count: le.Uint64(e[8:]), Offset: le.Uint64(e[16:]), Length: le.Uint64(e[24:]), Sum: Sum(e[32:64])}
	}
	if err := h.checkShape(); err != nil {
		return nil, err
	}
	if err := h.checkPlaces(); err != nil {
		return nil, err
	}
	return h, nil
}

// checkShape checks the counts against each other.
func (h *Header) checkShape() error {
	n, pub, priv := h.DomainSize, h.NbPublic, h.NbPrivate
	if n < 2 || n > maxPoints || bits.OnesCount64(n) != 1 || pub < 1 || pub > n || priv > maxPoints || pub+priv > maxPoints {
		return corrupt("header", "bad shape: domain %d, %d public, %d private", n, pub, priv)
	}
	nv := pub + priv
	want := [nbSections]uint64{1, nv, nv, h.Sections[SecA].Count, h.Sections[SecB1].Count, priv + n - 1, h.Sections[SecB1].Count}
	for i, s := range h.Sections {
		name := SectionID(i).String()
		switch {
		case s.ID != SectionID(i):
			return corrupt(name, "table entry %d has id %d", i, uint32(s.ID))
		case s.ElemSize != elemSizes[i]:
			return corrupt(name, "element size %d, want %d", s.ElemSize, elemSizes[i])
		case s.Count != want[i]:
			return corrupt(name, "%d elements, the shape needs %d", s.Count, want[i])
		case s.Count > nv && SectionID(i) != SecLH:
			return corrupt(name, "%d elements for %d variables", s.Count, nv)
		case s.Length != s.Count*uint64(s.ElemSize):
			return corrupt(name, "length %d for %d elements of %d bytes", s.Length, s.Count, s.ElemSize)
		}
	}
	return nil
}

// checkPlaces checks that the sections are aligned, in order, apart and
// inside the file.
func (h *Header) checkPlaces() error {
	next := uint64(Align)
	for i, s := range h.Sections {
		name := SectionID(i).String()
		switch {
		case s.Offset%Align != 0:
			return &headerErr{name, fmt.Errorf("%w: offset %d is not a multiple of %d", ErrAlignment, s.Offset, Align)}
		case s.Offset < next:
			return corrupt(name, "offset %d overlaps what comes before (ends at %d)", s.Offset, next)
		case s.Offset > h.FileSize || s.Length > h.FileSize-s.Offset:
			return &headerErr{name, fmt.Errorf("%w: %d bytes at %d pass the end of the %d-byte file", ErrTruncated, s.Length, s.Offset, h.FileSize)}
		}
		next = alignUp(s.Offset + s.Length)
	}
	if next != h.FileSize {
		return corrupt("header", "file has %d bytes, the sections end at %d", h.FileSize, next)
	}
	return nil
}
