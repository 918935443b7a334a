package groth16

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
)

// Binary encodings. Every object is framed as
//
//	magic [4]byte | version uint16 | curve uint16 | body | sha256(all before) [32]byte
//
// big-endian, with points in the compressed form of the zcash BLS12-381
// serialization (48-byte G1, 96-byte G2; gnark-crypto's Bytes/SetBytes).
// Decoders check every point (on curve, in the prime-order subgroup), every
// length against the others, and the checksum before returning anything.
const (
	formatVersion uint16 = 1
	// curveBLS12381 identifies BLS12-381 in the header. It is this format's
	// own number (not gnark's ecc.ID, which may be renumbered).
	curveBLS12381 uint16 = 0x0381

	g1Size = bls12381.SizeOfG1AffineCompressed
	g2Size = bls12381.SizeOfG2AffineCompressed
	// maxPoints bounds any encoded slice length (2^31 points).
	maxPoints = 1 << 31
	// readChunk is how many points are read (and allocated) at a time, so a
	// forged length cannot force a huge allocation before data runs out.
	readChunk = 1 << 16
)

var (
	magicProof = [4]byte{'C', 'Z', 'K', 'P'}
	magicVK    = [4]byte{'C', 'Z', 'K', 'V'}
	magicPK    = [4]byte{'C', 'Z', 'K', 'K'}
)

// Errors returned by the decoders, wrapped with the object and step.
var (
	ErrFormat   = errors.New("groth16: not this kind of encoding (bad magic)")
	ErrVersion  = errors.New("groth16: unsupported encoding version")
	ErrCurve    = errors.New("groth16: encoding is for another curve")
	ErrChecksum = errors.New("groth16: checksum mismatch (corrupted data)")
	ErrCorrupt  = errors.New("groth16: malformed encoding")
)

// encoder writes one framed object, hashing everything it writes.
type encoder struct {
	w   io.Writer
	h   hash.Hash
	n   int64
	err error
}

func newEncoder(w io.Writer, magic [4]byte) *encoder {
	e := &encoder{w: w, h: sha256.New()}
	e.write(magic[:])
	e.u16(formatVersion)
	e.u16(curveBLS12381)
	return e
}

func (e *encoder) write(b []byte) {
	if e.err != nil {
		return
	}
	e.h.Write(b) // hash.Hash.Write never returns an error
	k, err := e.w.Write(b)
	e.n += int64(k)
	e.err = err
}

func (e *encoder) u16(v uint16) { e.write(binary.BigEndian.AppendUint16(nil, v)) }
func (e *encoder) u32(v uint32) { e.write(binary.BigEndian.AppendUint32(nil, v)) }

func (e *encoder) g1(p *bls12381.G1Affine) { b := p.Bytes(); e.write(b[:]) }
func (e *encoder) g2(p *bls12381.G2Affine) { b := p.Bytes(); e.write(b[:]) }

func (e *encoder) g1s(ps []bls12381.G1Affine) {
	e.u32(uint32(len(ps)))
	buf := make([]byte, 0, min(len(ps), readChunk)*g1Size)
	for i := range ps {
		b := ps[i].Bytes()
		buf = append(buf, b[:]...)
		if len(buf) == cap(buf) {
			e.write(buf)
			buf = buf[:0]
		}
	}
	e.write(buf)
}

func (e *encoder) g2s(ps []bls12381.G2Affine) {
	e.u32(uint32(len(ps)))
	for i := range ps {
		e.g2(&ps[i])
	}
}

// bools writes a length-prefixed bitmap, least significant bit first.
func (e *encoder) bools(v []bool) {
	e.u32(uint32(len(v)))
	buf := make([]byte, (len(v)+7)/8)
	for i, b := range v {
		if b {
			buf[i/8] |= 1 << (i % 8)
		}
	}
	e.write(buf)
}

// finish writes the checksum trailer.
func (e *encoder) finish() (int64, error) {
	if e.err != nil {
		return e.n, e.err
	}
	sum := e.h.Sum(nil)
	k, err := e.w.Write(sum)
	return e.n + int64(k), err
}

// decoder reads one framed object, hashing everything it reads.
type decoder struct {
	r   io.Reader
	h   hash.Hash
	n   int64
	err error
}

func newDecoder(r io.Reader, magic [4]byte) *decoder {
	d := &decoder{r: r, h: sha256.New()}
	var got [4]byte
	d.read(got[:])
	version, curve := d.u16(), d.u16()
	switch {
	case d.err != nil:
	case got != magic:
		d.err = fmt.Errorf("%w: magic %q, want %q", ErrFormat, got[:], magic[:])
	case version != formatVersion:
		d.err = fmt.Errorf("%w: %d (this build reads %d)", ErrVersion, version, formatVersion)
	case curve != curveBLS12381:
		d.err = fmt.Errorf("%w: curve id %#04x, want BLS12-381 (%#04x)", ErrCurve, curve, curveBLS12381)
	}
	return d
}

func (d *decoder) read(b []byte) {
	if d.err != nil {
		return
	}
	k, err := io.ReadFull(d.r, b)
	d.n += int64(k)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		d.err = fmt.Errorf("truncated after %d bytes: %w", d.n, err)
		return
	}
	d.h.Write(b) // hash.Hash.Write never returns an error
}

func (d *decoder) u16() uint16 {
	var b [2]byte
	d.read(b[:])
	return binary.BigEndian.Uint16(b[:])
}

func (d *decoder) u32() uint32 {
	var b [4]byte
	d.read(b[:])
	return binary.BigEndian.Uint32(b[:])
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
}

func (d *decoder) g1(p *bls12381.G1Affine) {
	var b [g1Size]byte
	d.read(b[:])
	if d.err == nil {
		if _, err := p.SetBytes(b[:]); err != nil {
			d.fail("G1 point at byte %d: %v", d.n-g1Size, err)
		}
	}
}

func (d *decoder) g2(p *bls12381.G2Affine) {
	var b [g2Size]byte
	d.read(b[:])
	if d.err == nil {
		if _, err := p.SetBytes(b[:]); err != nil {
			d.fail("G2 point at byte %d: %v", d.n-g2Size, err)
		}
	}
}

// length reads a slice length and checks it against want (−1: any).
func (d *decoder) length(what string, want int) int {
	n := int(d.u32())
	if d.err == nil && ((want >= 0 && n != want) || n > maxPoints) {
		d.fail("%s has %d entries, want %d", what, n, want)
	}
	if d.err != nil {
		return 0
	}
	return n
}

// points reads a length-prefixed slice of size-byte compressed points in
// chunks and returns it with its 4-byte length prefix, the layout
// gnark-crypto's Decoder reads. Every point must carry the compressed flag
// (so a decoded key re-encodes to the same bytes).
func (d *decoder) points(what string, want, size int) (raw []byte, n int) {
	n = d.length(what, want)
	raw = binary.BigEndian.AppendUint32(make([]byte, 0, 4+min(n, readChunk)*size), uint32(n))
	for len(raw) < 4+n*size && d.err == nil {
		k := min(4+n*size-len(raw), readChunk*size)
		raw = append(raw, make([]byte, k)...)
		d.read(raw[len(raw)-k:])
	}
	for i := 0; i < n && d.err == nil; i++ {
		if raw[4+i*size]&compressedFlag == 0 {
			d.fail("%s: point %d is not in compressed form", what, i)
		}
	}
	return raw, n
}

// compressedFlag is the top bit of a compressed point's first byte.
const compressedFlag = 0x80

// decodeOpts returns gnark-crypto decoder options: subgroup checks on or off.
// Points are checked to be on the curve either way (decompression needs a
// square root).
func decodeOpts(subgroupCheck bool) []func(*bls12381.Decoder) {
	if subgroupCheck {
		return nil
	}
	return []func(*bls12381.Decoder){bls12381.NoSubgroupChecks()}
}

// g1s reads a G1 slice of any length (want < 0) or of length want.
func (d *decoder) g1s(what string, want int, subgroupCheck bool) []bls12381.G1Affine {
	raw, n := d.points(what, want, g1Size)
	if d.err != nil {
		return nil
	}
	out := make([]bls12381.G1Affine, n)
	d.decodeG1(what, raw, out, subgroupCheck)
	return out
}

// decodeG1 decompresses raw (length-prefixed, len(dst) points) into dst in
// place with gnark-crypto's Decoder, which computes the y coordinates in
// parallel.
func (d *decoder) decodeG1(what string, raw []byte, dst []bls12381.G1Affine, subgroupCheck bool) {
	dec := bls12381.NewDecoder(bytes.NewReader(raw), decodeOpts(subgroupCheck)...)
	if err := dec.Decode(&dst); err != nil {
		d.fail("%s: %v", what, err)
	}
}

// g2s reads a G2 slice like g1s.
func (d *decoder) g2s(what string, want int, subgroupCheck bool) []bls12381.G2Affine {
	raw, n := d.points(what, want, g2Size)
	if d.err != nil {
		return nil
	}
	out := make([]bls12381.G2Affine, n)
	dec := bls12381.NewDecoder(bytes.NewReader(raw), decodeOpts(subgroupCheck)...)
	if err := dec.Decode(&out); err != nil {
		d.fail("%s: %v", what, err)
	}
	return out
}

func (d *decoder) bools(what string, want int) []bool {
	n := d.length(what, want)
	buf := make([]byte, (n+7)/8)
	d.read(buf)
	if d.err != nil {
		return nil
	}
	out := make([]bool, n)
	for i := range out {
		out[i] = buf[i/8]&(1<<(i%8)) != 0
	}
	if n%8 != 0 && buf[len(buf)-1]>>(n%8) != 0 {
		d.fail("%s: padding bits set", what)
	}
	return out
}

// finish reads the trailer and compares it with the hash of what was read.
func (d *decoder) finish() (int64, error) {
	if d.err != nil {
		return d.n, d.err
	}
	want := d.h.Sum(nil)
	var got [sha256.Size]byte
	d.read(got[:])
	if d.err != nil {
		return d.n, d.err
	}
	if string(got[:]) != string(want) {
		return d.n, ErrChecksum
	}
	return d.n, nil
}
