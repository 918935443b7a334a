package gpu

import (
	"encoding/binary"
	"math/big"
	"os"
	"os/exec"
	"testing"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"
	"github.com/consensys/gnark-crypto/ecc"
)

func TestEmuDev(t *testing.T) {
	h := os.Getenv("MSM_HARNESS")
	if h == "" {
		t.Skip("no harness")
	}
	_, _, g1, g2 := bls12381.Generators()
	for _, tc := range []struct {
		n    int
		kind string
		g2   bool
	}{{1, "rand", false}, {2, "rand", false}, {3, "rand", false}, {200, "rand", false}, {300, "one", false},
		{300, "dup", false}, {100, "small", false}, {50, "rand", true}, {3, "rand", true}} {
		sc := make([]fr.Element, tc.n)
		for i := range sc {
			switch tc.kind {
			case "one":
				sc[i].SetOne()
			case "small":
				sc[i].SetUint64(uint64(i % 5))
			default:
				sc[i].SetRandom()
			}
		}
		p, err := newMSMPlan(tc.n)
		require.NoError(t, err)
		hdr := []uint32{1, uint32(tc.n), p.c, p.nwin, p.t1, p.t2, p.k}
		if tc.g2 {
			hdr[0] = 2
		}
		f, _ := os.Create("/tmp/msmdev/in.bin")
		binary.Write(f, binary.LittleEndian, hdr)
		f.Write(unsafe.Slice((*byte)(unsafe.Pointer(&sc[0])), 32*tc.n))
		var b1 []bls12381.G1Affine
		var b2 []bls12381.G2Affine
		for i := 0; i < tc.n; i++ {
			var k fr.Element
			k.SetRandom()
			if tc.kind == "dup" {
				k.SetUint64(uint64(i % 3))
			}
			var bi big.Int
			k.BigInt(&bi)
			if tc.g2 {
				var a bls12381.G2Affine
				a.ScalarMultiplication(&g2, &bi)
				b2 = append(b2, a)
			} else {
				var a bls12381.G1Affine
				a.ScalarMultiplication(&g1, &bi)
				b1 = append(b1, a)
			}
		}
		if tc.g2 {
			f.Write(unsafe.Slice((*byte)(unsafe.Pointer(&b2[0])), 192*tc.n))
		} else {
			f.Write(unsafe.Slice((*byte)(unsafe.Pointer(&b1[0])), 96*tc.n))
		}
		f.Close()
		out, err := exec.Command(h, "/tmp/msmdev/in.bin", "/tmp/msmdev/out.bin").CombinedOutput()
		require.NoError(t, err, string(out))
		t.Log(string(out))
		raw, _ := os.ReadFile("/tmp/msmdev/out.bin")
		if tc.g2 {
			w := unsafe.Slice((*g2XYZZ)(unsafe.Pointer(&raw[0])), p.nwin)
			got := combineG2(w, p.c)
			var want bls12381.G2Jac
			_, err := want.MultiExp(b2, sc, ecc0())
			require.NoError(t, err)
			require.True(t, got.Equal(&want), "g2 n=%d %s", tc.n, tc.kind)
		} else {
			w := unsafe.Slice((*g1XYZZ)(unsafe.Pointer(&raw[0])), p.nwin)
			got := combineG1(w, p.c)
			var want bls12381.G1Jac
			_, err := want.MultiExp(b1, sc, ecc0())
			require.NoError(t, err)
			require.True(t, got.Equal(&want), "g1 n=%d %s", tc.n, tc.kind)
		}
	}
}

func ecc0() ecc.MultiExpConfig { return ecc.MultiExpConfig{} }
