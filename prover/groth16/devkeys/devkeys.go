package devkeys

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Info says where a key pair came from and what it cost.
type Info struct {
	Cached         bool          // read from the cache directory
	PKPath, VKPath string        // the cache files; "" when caching is off (PKPath also when WithRawFileOnly wrote none)
	PKSize, VKSize int64         // their sizes in bytes (0 when caching is off)
	RawPath        string        // the raw key file (prover/groth16/keyfile) beside them; "" when caching is off
	RawSize        int64         // its size when Get wrote it (WithRawFile) or Mapped opened it; else 0
	Raw            time.Duration // writing the raw key file (WithRawFile)
	Load           time.Duration // reading the files (hit)
	Setup, Store   time.Duration // development setup and writing the files (miss)
	Replaced       string        // why a cached file was not used; "" when none was there
}

// Dir is the default cache directory, under the user's cache directory
// (the temporary directory when there is none). It is the directory the
// benchmarks have always used, so existing caches still hit.
func Dir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir() // no home or XDG directory: still cache per machine
	}
	return filepath.Join(dir, "cuzk-bench", "keys")
}

// Get returns development keys for sys (name labels the circuit in the file
// names, e.g. "porep-synth-1024"; seed seeds the setup trapdoor through
// Rand(seed, 0)). With dir set it loads them from dir when a file for this
// name, seed and shape is there and fits sys, and otherwise runs the setup
// and writes them to dir; with dir "" it always runs the setup.
//
// Get is safe to call concurrently, from any number of processes: files are
// renamed into place whole, and two processes that miss at once each write
// the same deterministic keys. The keys are NOT for production (see the
// package comment).
func Get(dir, name string, sys *r1cs.System, seed uint64, opts ...Option) (*groth16.ProvingKey, *groth16.VerifyingKey, Info, error) {
	return GetWith(context.Background(), dir, name, sys, seed, nil, opts...)
}

// GetWith is Get with a miss's setup run by groth16.SetupWith(ctx, …, fb)
// (nil fb: the CPU): a GPU FixedBaser gives the same keys, byte for byte,
// faster. It stops once ctx is done, as SetupWith does.
func GetWith(ctx context.Context, dir, name string, sys *r1cs.System, seed uint64, fb groth16.FixedBaser, opts ...Option) (
	*groth16.ProvingKey, *groth16.VerifyingKey, Info, error) {
	var info Info
	var cfg config
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, nil, info, fmt.Errorf("dev keys: %w", err)
		}
	}
	if name == "" || strings.ContainsAny(name, `/\`) {
		return nil, nil, info, fmt.Errorf("dev keys: bad circuit name %q", name)
	}
	if dir != "" {
		info.PKPath, info.VKPath, info.RawPath = paths(dir, name, seed, ShapeID(sys))
		start := time.Now()
		pk, vk, err := load(info.PKPath, info.VKPath, sys)
		switch {
		case err == nil:
			info.Cached, info.Load = true, time.Since(start)
			info.PKSize, info.VKSize = fileSize(info.PKPath), fileSize(info.VKPath)
			return pk, vk, info, cfg.writeRaw(&info, pk)
		case !errors.Is(err, os.ErrNotExist):
			info.Replaced = err.Error() // damaged or mismatched: replaced below, like a miss
		}
	}
	start := time.Now()
	pk, vk, err := groth16.SetupWith(ctx, sys, Rand(seed, 0), fb) // development only
	if err != nil {
		return nil, nil, info, fmt.Errorf("dev keys: setup %s: %w", name, err)
	}
	info.Setup = time.Since(start)
	if dir == "" {
		return pk, vk, info, nil
	}
	start = time.Now()
	if cfg.rawOnly {
		if info.Replaced != "" { // a damaged .pk: the raw file replaces it
			if err := os.Remove(info.PKPath); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, nil, info, fmt.Errorf("dev keys: %w", err)
			}
		}
		info.PKPath = "" // the raw file stands for it
	}
	if err := store(dir, info.PKPath, info.VKPath, pk, vk); err != nil {
		return nil, nil, info, err
	}
	info.Store = time.Since(start)
	info.PKSize, info.VKSize = fileSize(info.PKPath), fileSize(info.VKPath)
	return pk, vk, info, cfg.writeRaw(&info, pk)
}

// ShapeID hashes sys's counts, coefficients and matrices (SHA-256, first
// 12 bytes in hex): equal for two compilations of one circuit whatever the
// witness, different when any constraint changes.
func ShapeID(sys *r1cs.System) string {
	h := sha256.New()
	le := binary.LittleEndian
	_ = binary.Write(h, le, []uint32{uint32(sys.NbPublic), uint32(sys.NbPrivate), uint32(sys.NbConstraints)}) // hash writes never fail
	for i := range sys.Coeffs {
		b := sys.Coeffs[i].Bytes()
		h.Write(b[:])
	}
	buf := make([]byte, 0, 1<<20)
	for _, m := range []*r1cs.Matrix{&sys.A, &sys.B, &sys.C} {
		for _, v := range [][]uint32{m.RowPtr, m.Col, m.CoeffID} {
			buf = hashUint32s(h, buf, v)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// hashUint32s writes v to h little-endian, as binary.Write would, through
// buf (1 MiB at a time) instead of one copy of all of v (gigabytes at 2^27).
func hashUint32s(h hash.Hash, buf []byte, v []uint32) []byte {
	for len(v) > 0 {
		n := min(len(v), cap(buf)/4)
		buf = buf[:0]
		for _, x := range v[:n] {
			buf = binary.LittleEndian.AppendUint32(buf, x)
		}
		h.Write(buf) // hash writes never fail
		v = v[n:]
	}
	return buf
}

// Rand is a deterministic byte stream (ChaCha8) for (seed, stream): stream 0
// is the setup trapdoor of Get; callers take the other streams for proof
// blinding, so equal arguments give equal r and s on every backend. Each
// call returns a new, independent reader; a reader is not safe for
// concurrent use.
func Rand(seed, stream uint64) io.Reader {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[0:], seed)
	binary.LittleEndian.PutUint64(key[8:], stream)
	copy(key[16:], "cuzk-bench rand") // unchanged since the first cached keys: they stay reproducible
	return rand.NewChaCha8(key)
}

// paths names the key files of one circuit, seed and shape.
func paths(dir, name string, seed uint64, shape string) (pk, vk, raw string) {
	base := filepath.Join(dir, fmt.Sprintf("%s-setup%d-%s", name, seed, shape))
	return base + ".pk", base + ".vk", base + RawExt
}

// fits reports whether a key pair was made for sys's counts and domain.
func fits(pk *groth16.ProvingKey, vk *groth16.VerifyingKey, sys *r1cs.System) error {
	if pk.NbPublic != sys.NbPublic || pk.NbPrivate != sys.NbPrivate || pk.DomainSize != sys.DomainSize() {
		return fmt.Errorf("proving key has %d public, %d private, domain %d; circuit has %d, %d, %d",
			pk.NbPublic, pk.NbPrivate, pk.DomainSize, sys.NbPublic, sys.NbPrivate, sys.DomainSize())
	}
	if len(vk.G1.IC) != sys.NbPublic {
		return fmt.Errorf("verifying key has %d IC points, circuit has %d public", len(vk.G1.IC), sys.NbPublic)
	}
	return nil
}
