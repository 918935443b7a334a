package keyfile

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/cuzk-dev/cuzk/internal/renameio"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// WriteOption configures Write.
type WriteOption func(*writeConfig) error

type writeConfig struct{ check bool }

// SkipChecks writes the file without checking the points, and without
// FlagChecked. It is for keys valid by construction (a development Setup),
// where checking a large key would cost more than the setup's last step.
func SkipChecks() WriteOption {
	return func(c *writeConfig) error { c.check = false; return nil }
}

// Write writes pk to path as a raw key file, atomically (internal/renameio:
// a reader sees the old file or the whole new one, and a crash leaves no
// half of one). Unless SkipChecks is given it first checks every point on
// the curve and in the prime-order subgroup, failing on the first that is
// not, and records FlagChecked. pk must not change during the call; any
// number of Writes of one key may run at once.
func Write(path string, pk *groth16.ProvingKey, opts ...WriteOption) error {
	cfg := writeConfig{check: true}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return fmt.Errorf("write key file %s: %w", path, err)
		}
	}
	if err := hostOK(); err != nil {
		return fmt.Errorf("write key file %s: %w", path, err)
	}
	data, err := contents(pk)
	if err != nil {
		return fmt.Errorf("write key file %s: %w", path, err)
	}
	h := plan(pk, data)
	if cfg.check {
		if err := Check(pk); err != nil {
			return fmt.Errorf("write key file %s: %w", path, err)
		}
		h.Flags |= FlagChecked
	}
	sums := sumAll(data, h.HashChunk)
	for i := range h.Sections {
		h.Sections[i].Sum = sums[i]
	}
	return writeFile(path, h, data)
}

// writeFile writes the header page and the sections, each padded to Align.
func writeFile(path string, h *Header, data [nbSections][]byte) error {
	f, err := renameio.Create(path, 0o644)
	if err != nil {
		return fmt.Errorf("write key file: %w", err)
	}
	defer f.Cleanup()
	var pad [Align]byte
	if _, err := f.Write(encodeHeader(h)); err != nil {
		return fmt.Errorf("write key file %s: header: %w", path, err)
	}
	for i, d := range data {
		if _, err := f.Write(d); err != nil {
			return fmt.Errorf("write key file %s: section %s: %w", path, SectionID(i), err)
		}
		s := h.Sections[i]
		if _, err := f.Write(pad[:alignUp(s.Offset+s.Length)-(s.Offset+s.Length)]); err != nil {
			return fmt.Errorf("write key file %s: section %s: %w", path, SectionID(i), err)
		}
	}
	return f.CloseAtomicallyReplace()
}

// sumAll computes the sections' sums of data in memory, hashing their
// pieces on all cores.
func sumAll(data [nbSections][]byte, chunk uint64) [nbSections]Sum {
	sums, err := sumGuarded(data, chunk)
	if err != nil {
		panic(err) // memory the process owns does not fault
	}
	return sums
}

// sumGuarded is sumAll over sections that may be a mapping: a fault in
// any worker (the file truncated meanwhile) is the error, not the end of
// the process.
func sumGuarded(data [nbSections][]byte, chunk uint64) ([nbSections]Sum, error) {
	type piece struct{ sec, i int }
	var pieces []piece
	var leaves [nbSections][]Sum
	for s, d := range data {
		leaves[s] = make([]Sum, max(1, (uint64(len(d))+chunk-1)/chunk))
		for i := range leaves[s] {
			pieces = append(pieces, piece{s, i})
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var faulted atomic.Pointer[error]
	for range min(runtime.GOMAXPROCS(0), len(pieces)) {
		wg.Go(func() {
			err := guardFaults(func() {
				for t := next.Add(1) - 1; t < int64(len(pieces)); t = next.Add(1) - 1 {
					p, d := pieces[t], data[pieces[t].sec]
					lo := min(uint64(p.i)*chunk, uint64(len(d)))
					leaves[p.sec][p.i] = sha256.Sum256(d[lo:min(lo+chunk, uint64(len(d)))])
				}
			})
			if err != nil {
				faulted.CompareAndSwap(nil, &err)
				next.Store(int64(len(pieces))) // the others stop at their next piece
			}
		})
	}
	wg.Wait()
	var sums [nbSections]Sum
	if err := faulted.Load(); err != nil {
		return sums, *err
	}
	for s := range leaves {
		h := sha256.New()
		for _, l := range leaves[s] {
			h.Write(l[:]) // hash.Hash.Write never returns an error
		}
		sums[s] = Sum(h.Sum(nil))
	}
	return sums, nil
}

// Check checks every point of pk on the curve and in the prime-order
// subgroup, on all cores, and names the first bad one it finds. It only
// reads pk.
func Check(pk *groth16.ProvingKey) error {
	g1 := []struct {
		name string
		ps   []bls12381.G1Affine
	}{{"α", []bls12381.G1Affine{pk.G1.Alpha, pk.G1.Beta, pk.G1.Delta}}, {"A", pk.G1.A}, {"B1", pk.G1.B}, {"L", pk.G1.L}, {"H", pk.G1.H}}
	for _, s := range g1 {
		if err := checkAll(s.name, s.ps, func(p *bls12381.G1Affine) bool { return p.IsOnCurve() && p.IsInSubGroup() }); err != nil {
			return err
		}
	}
	small := []bls12381.G2Affine{pk.G2.Beta, pk.G2.Delta}
	if err := checkAll("β₂/δ₂", small, func(p *bls12381.G2Affine) bool { return p.IsOnCurve() && p.IsInSubGroup() }); err != nil {
		return err
	}
	return checkAll("B2", pk.G2.B, func(p *bls12381.G2Affine) bool { return p.IsOnCurve() && p.IsInSubGroup() })
}

// errBadPoint is a point off the curve or outside the subgroup.
var errBadPoint = errors.New("point not on the curve or not in the prime-order subgroup")

// checkAll runs ok over ps in chunks on all cores.
func checkAll[T any](name string, ps []T, ok func(*T) bool) error {
	workers := runtime.GOMAXPROCS(0)
	chunk := max(1, (len(ps)+workers-1)/workers)
	bad := make([]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		bad[w] = -1
		lo, hi := min(w*chunk, len(ps)), min((w+1)*chunk, len(ps))
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				if !ok(&ps[i]) {
					bad[w] = i
					return
				}
			}
		})
	}
	wg.Wait()
	for _, i := range bad {
		if i >= 0 {
			return fmt.Errorf("check %s[%d]: %w", name, i, errBadPoint)
		}
	}
	return nil
}
