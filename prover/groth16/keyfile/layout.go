package keyfile

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// small is section 0: the key's single points, in file order.
type small struct {
	G1Alpha, G1Beta, G1Delta bls12381.G1Affine
	G2Beta, G2Delta          bls12381.G2Affine
}

var _ [unsafe.Sizeof(small{}) - uintptr(smallSize)]struct{} // no padding between the points

// hostOK reports whether this host lays memory out as the format does.
func hostOK() error {
	var x uint64 = 1
	if unsafe.Sizeof(uintptr(0)) != 8 || *(*byte)(unsafe.Pointer(&x)) != 1 || binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		return ErrHost
	}
	return nil
}

// bytesOf views a slice's elements as bytes (no copy).
func bytesOf[T any](v []T) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*int(unsafe.Sizeof(v[0])))
}

// viewOf views b as len(b)/size(T) elements (no copy); b must be aligned
// for T, which the caller checks.
func viewOf[T any](b []byte) []T {
	var zero T
	n := len(b) / int(unsafe.Sizeof(zero))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// contents returns pk's sections' bytes in file order, as views of pk's
// memory (L‖H copied into one array when pk holds them apart).
func contents(pk *groth16.ProvingKey) ([nbSections][]byte, error) {
	var out [nbSections][]byte
	nv := pk.NbVariables()
	if len(pk.InfinityA) != nv || len(pk.InfinityB) != nv || len(pk.G1.L) != pk.NbPrivate ||
		len(pk.G1.H) != pk.DomainSize-1 || len(pk.G2.B) != len(pk.G1.B) {
		return out, fmt.Errorf("inconsistent key: %d variables, InfinityA %d, InfinityB %d, L %d (want %d), H %d (want %d), B1 %d, B2 %d",
			nv, len(pk.InfinityA), len(pk.InfinityB), len(pk.G1.L), pk.NbPrivate, len(pk.G1.H), pk.DomainSize-1, len(pk.G1.B), len(pk.G2.B))
	}
	s := &small{pk.G1.Alpha, pk.G1.Beta, pk.G1.Delta, pk.G2.Beta, pk.G2.Delta}
	out[SecSmall] = unsafe.Slice((*byte)(unsafe.Pointer(s)), smallSize)
	out[SecInfA], out[SecInfB] = bytesOf(pk.InfinityA), bytesOf(pk.InfinityB)
	out[SecA], out[SecB1], out[SecB2] = bytesOf(pk.G1.A), bytesOf(pk.G1.B), bytesOf(pk.G2.B)
	g1, _ := pk.Bases()
	if len(g1) == 3 { // A, B, L‖H adjacent
		out[SecLH] = bytesOf(g1[2])
	} else {
		out[SecLH] = bytesOf(append(append(make([]bls12381.G1Affine, 0, len(pk.G1.L)+len(pk.G1.H)), pk.G1.L...), pk.G1.H...))
	}
	return out, nil
}

// plan lays out sections of the given lengths: the header, then each
// section at the next multiple of Align.
func plan(pk *groth16.ProvingKey, data [nbSections][]byte) *Header {
	h := &Header{Version: Version, DomainSize: uint64(pk.DomainSize), NbPublic: uint64(pk.NbPublic), NbPrivate: uint64(pk.NbPrivate), HashChunk: HashChunk}
	off := uint64(Align)
	for i, d := range data {
		size := uint64(elemSizes[i])
		h.Sections[i] = Section{ID: SectionID(i), ElemSize: uint32(size), Count: uint64(len(d)) / size, Offset: off, Length: uint64(len(d))}
		off = alignUp(off + uint64(len(d)))
	}
	h.FileSize = off
	return h
}

// FileSize is the size of the raw key file of a key of size s, as Write
// lays it out: the header page, then each section at the next multiple of
// Align.
func FileSize(s groth16.KeySize) int64 {
	nv := uint64(s.NbPublic + s.NbPrivate)
	counts := [nbSections]uint64{SecSmall: 1, SecInfA: nv, SecInfB: nv, SecA: uint64(s.A), SecB1: uint64(s.B),
		SecLH: uint64(s.NbPrivate + s.H()), SecB2: uint64(s.B)}
	off := uint64(Align)
	for i, n := range counts {
		off = alignUp(off + n*uint64(elemSizes[i]))
	}
	return int64(off)
}
