package keyfile

import (
	"crypto/sha256"
	"testing"
	"unsafe"
)

// sign rewrites b's header checksum, so that the fuzzer's mutations reach
// the checks behind it.
func sign(b []byte) []byte {
	if len(b) < headerUsed {
		return b
	}
	b = append([]byte(nil), b...)
	sum := sha256.Sum256(b[:headerUsed-sha256.Size])
	copy(b[headerUsed-sha256.Size:], sum[:])
	return b
}

// FuzzParseHeader: no header page makes ParseHeader panic, and one it
// accepts describes sections inside the file and encodes back to itself.
func FuzzParseHeader(f *testing.F) {
	good := goodFile(f)
	f.Add(good[:Align], int64(len(good)), false)
	f.Add(good[:Align], int64(len(good)-1), true)
	f.Fuzz(func(t *testing.T, b []byte, size int64, resign bool) {
		if resign {
			b = sign(b)
		}
		h, err := ParseHeader(b, size)
		if err != nil {
			if h != nil {
				t.Fatalf("header %+v returned with error %v", h, err)
			}
			return
		}
		for _, s := range h.Sections {
			if s.Offset%Align != 0 || s.Offset+s.Length > uint64(size) || s.Length != s.Count*uint64(s.ElemSize) {
				t.Fatalf("accepted section %+v in a %d-byte file", s, size)
			}
		}
		if enc := encodeHeader(h); string(enc[:headerUsed]) != string(b[:headerUsed]) {
			t.Fatalf("accepted header does not encode back to its bytes")
		}
	})
}

// FuzzOpen: no file makes Open panic; a file it accepts gives a key whose
// lengths agree, and which encodes. It runs Open's checks on the bytes in
// page-aligned memory (as a mapping is), without the file system; files
// shorter than a page are refused before (TestDamagedFilesAreClearErrors).
func FuzzOpen(f *testing.F) {
	f.Add(goodFile(f), false)
	f.Fuzz(func(t *testing.T, b []byte, resign bool) {
		if len(b) < Align {
			return
		}
		if resign {
			b = sign(b)
		}
		k, err := newKey("fuzz.rawpk", alignedCopy(b), int64(len(b)), openConfig{})
		if err != nil {
			if k != nil {
				t.Fatalf("key returned with error %v", err)
			}
			return
		}
		pk := k.PK
		if len(pk.InfinityA) != pk.NbVariables() || len(pk.G1.L) != pk.NbPrivate || len(pk.G1.H) != pk.DomainSize-1 || len(pk.G1.B) != len(pk.G2.B) {
			t.Fatalf("accepted key with inconsistent lengths")
		}
		if _, err := pk.WriteTo(discard{}); err != nil {
			t.Fatalf("accepted key does not encode: %v", err)
		}
	})
}

// alignedCopy copies b into page-aligned memory.
func alignedCopy(b []byte) []byte {
	raw := make([]byte, len(b)+Align)
	skip := (Align - int(uintptr(unsafe.Pointer(unsafe.SliceData(raw)))%Align)) % Align
	out := raw[skip : skip+len(b)]
	copy(out, b)
	return out
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }
