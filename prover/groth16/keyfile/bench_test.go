package keyfile_test

import (
	"bytes"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile"
)

// syntheticKey is a key of porep-synth's proportions for a domain of n
// (n variables, 1 public; A over every variable, B over half; L over the
// privates, H over n−1), its slices cycling through 1024 distinct valid
// points: decoding, hashing and copying cost the same per point whatever
// the values, and it is built in a moment.
func syntheticKey(n int) *groth16.ProvingKey {
	g1s, g2s := make([]bls12381.G1Affine, 1024), make([]bls12381.G2Affine, 1024)
	_, _, g1, g2 := bls12381.Generators()
	for i := range g1s {
		var s fr.Element
		s.SetUint64(uint64(i) + 2)
		g1s[i].ScalarMultiplication(&g1, s.BigInt(new(big.Int)))
		g2s[i].ScalarMultiplication(&g2, s.BigInt(new(big.Int)))
	}
	fill1 := func(k int) []bls12381.G1Affine {
		out := make([]bls12381.G1Affine, k)
		for i := range out {
			out[i] = g1s[i%len(g1s)]
		}
		return out
	}
	pk := &groth16.ProvingKey{DomainSize: n, NbPublic: 1, NbPrivate: n - 1}
	pk.InfinityA, pk.InfinityB = make([]bool, n), make([]bool, n)
	for i := 1; i < n; i += 2 {
		pk.InfinityB[i] = true
	}
	pk.G1.Alpha, pk.G1.Beta, pk.G1.Delta = g1s[0], g1s[1], g1s[2]
	pk.G2.Beta, pk.G2.Delta = g2s[0], g2s[1]
	pk.G1.A, pk.G1.B = fill1(n), fill1(n/2)
	pk.SetLH(fill1(2*n - 2))
	pk.G2.B = make([]bls12381.G2Affine, n/2)
	for i := range pk.G2.B {
		pk.G2.B[i] = g2s[i%len(g2s)]
	}
	return pk
}

// warm reads path once so that its pages are in the page cache.
func warm(b testing.TB, path string) {
	f, err := os.Open(path)
	require.NoError(b, err)
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	require.NoError(b, err)
}

// BenchmarkLoad measures loading a key from the page cache, in GB/s of the
// raw file (the key's bytes in memory): mapping with and without hashing
// the sections, touching every page of the mapping, copying the mapping
// into a prefaulted buffer (as into pinned memory for a GPU upload, on 1
// and on all cores), read(2) into that buffer, and, for comparison,
// decoding the compressed encoding (at 2^16 only: it takes seconds there).
func BenchmarkLoad(b *testing.B) {
	for _, logN := range []int{16, 20, 22} {
		n := 1 << logN
		pk := syntheticKey(n)
		path := filepath.Join(b.TempDir(), "k.rawpk")
		require.NoError(b, keyfile.Write(path, pk, keyfile.SkipChecks()))
		var enc bytes.Buffer
		_, err := pk.WriteTo(&enc)
		require.NoError(b, err)
		st, err := os.Stat(path)
		require.NoError(b, err)
		size := st.Size()
		warm(b, path)
		buf := make([]byte, size)
		for i := range buf {
			buf[i] = 1 // prefault: a pinned buffer is resident
		}
		for _, tc := range []struct {
			name string
			run  func(b *testing.B)
		}{
			{"open+verify", func(b *testing.B) { openClose(b, path, nil) }},
			{"open", func(b *testing.B) { openClose(b, path, nil, keyfile.SkipVerify()) }},
			{"open+touch", func(b *testing.B) { openClose(b, path, touch, keyfile.SkipVerify()) }},
			{"open+copy", func(b *testing.B) { openClose(b, path, copyInto(buf, 1), keyfile.SkipVerify()) }},
			{fmt.Sprintf("open+copy-%dcores", runtime.GOMAXPROCS(0)), func(b *testing.B) {
				openClose(b, path, copyInto(buf, runtime.GOMAXPROCS(0)), keyfile.SkipVerify())
			}},
			{"read", func(b *testing.B) { readInto(b, path, buf) }},
			{"decode-compressed", func(b *testing.B) {
				for b.Loop() {
					_, err := new(groth16.ProvingKey).ReadFrom(bytes.NewReader(enc.Bytes()))
					require.NoError(b, err)
				}
			}},
		} {
			if tc.name == "decode-compressed" && logN > 16 {
				continue // about 20 µs a point on this path: the rate is the same at every size
			}
			b.Run(fmt.Sprintf("2^%d/%s", logN, tc.name), func(b *testing.B) {
				b.SetBytes(size)
				tc.run(b)
				b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			})
		}
	}
}

func openClose(b *testing.B, path string, use func(*keyfile.Key), opts ...keyfile.OpenOption) {
	for b.Loop() {
		k, err := keyfile.Open(path, opts...)
		require.NoError(b, err)
		if use != nil {
			use(k)
		}
		require.NoError(b, k.Close())
	}
}

var sink byte

// touch reads one byte of every page of the key's point sections.
func touch(k *keyfile.Key) {
	var x byte
	for _, s := range sectionBytes(k) {
		for i := 0; i < len(s); i += keyfile.Align {
			x ^= s[i]
		}
	}
	sink = x
}

// copyInto copies the key's point sections into buf on the given number
// of goroutines.
func copyInto(buf []byte, workers int) func(*keyfile.Key) {
	return func(k *keyfile.Key) {
		var wg sync.WaitGroup
		off := 0
		for _, s := range sectionBytes(k) {
			chunk := (len(s) + workers - 1) / workers
			for lo := 0; lo < len(s); lo += chunk {
				src, dst := s[lo:min(lo+chunk, len(s))], buf[off+lo:]
				wg.Go(func() { copy(dst, src) })
			}
			off += len(s)
		}
		wg.Wait()
	}
}

// readInto reads the file into buf with read(2), 64 MiB at a time.
func readInto(b *testing.B, path string, buf []byte) {
	for b.Loop() {
		f, err := os.Open(path)
		require.NoError(b, err)
		for off := 0; off < len(buf); {
			k, err := f.ReadAt(buf[off:min(off+64<<20, len(buf))], int64(off))
			off += k
			if err != nil {
				require.ErrorIs(b, err, io.EOF)
				break
			}
		}
		require.NoError(b, f.Close())
	}
}

// sectionBytes returns the key's point vectors as bytes (views, no copy).
func sectionBytes(k *keyfile.Key) [][]byte {
	g1, g2 := k.PK.Bases()
	var out [][]byte
	for _, v := range g1 {
		out = append(out, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*96))
	}
	for _, v := range g2 {
		out = append(out, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*192))
	}
	return out
}
