package gpubench

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/internal/stats"
	"github.com/cuzk-dev/cuzk/prover/gpu"
)

// ErrNoFit reports a partition that does not fit in this machine's memory.
var ErrNoFit = errors.New("partition does not fit")

// Sizes of host-side points (gnark-crypto's affine layout, which the MSM
// engine uploads as is).
const (
	g1Bytes = int64(unsafe.Sizeof(bls12381.G1Affine{}))
	g2Bytes = int64(unsafe.Sizeof(bls12381.G2Affine{}))
)

// Shape is the size of one partition: domain 2^Log, Wires in the A MSM
// (one public, the rest private), BWires in both B MSMs.
type Shape struct {
	Log, Wires, BWires int
}

// N is the domain size.
func (s Shape) N() int { return 1 << s.Log }

// LH is the size of the MSM over L‖H: the private wires and the quotient's
// n − 1 coefficients.
func (s Shape) LH() int { return s.Wires - 1 + s.N() - 1 }

// MemPlan is the memory one partition needs, device and host, in bytes.
type MemPlan struct {
	BasesG1, BasesG2, Quotient, Scratch int64
	Host                                int64
}

// Device is the plan's device memory.
func (p MemPlan) Device() int64 { return p.BasesG1 + p.BasesG2 + p.Quotient + p.Scratch }

// PlanMemory sizes the partition: the resident bases of the four MSMs, the
// quotient's vectors and twiddles (gpu.QuotientHBytes) and the MSM engine's
// scratch for its largest MSM (L‖H in G1 or B in G2, gpu.MSMBytes); host
// side the tiled bases, a, b, c, the assignment's wires, and Prove's
// workspace: the buffer wires ‖ h (the L‖H scalars behind the first wire)
// and the compaction of the B wires when they are fewer.
func PlanMemory(s Shape) (MemPlan, error) {
	n, lh := int64(s.N()), int64(s.LH())
	g1Points := int64(s.Wires) + int64(s.BWires) + lh
	_, scratchB, err := gpu.MSMBytes(s.BWires, true, 0)
	if err != nil {
		return MemPlan{}, err
	}
	_, scratchLH, err := gpu.MSMBytes(int(lh), false, 0)
	if err != nil {
		return MemPlan{}, err
	}
	p := MemPlan{
		BasesG1:  g1Points * g1Bytes,
		BasesG2:  int64(s.BWires) * g2Bytes,
		Quotient: gpu.QuotientHBytes(uint32(s.Log)),
		Scratch:  max(scratchB, scratchLH),
	}
	vectors := 3*n + int64(s.Wires) + int64(s.Wires) + n - 1
	if s.BWires < s.Wires {
		vectors += int64(s.BWires)
	}
	p.Host = p.BasesG1 + p.BasesG2 + vectors*fr.Bytes
	return p, nil
}

// FitHeadroom is device memory left for the driver, modules, staging and the
// small buffers the plan does not count.
const FitHeadroom = 2 << 30

// CheckFit refuses a plan that does not fit devFree bytes of device memory
// (with FitHeadroom) and hostAvail of host memory (0: unknown, not
// checked), before anything is allocated.
func CheckFit(p MemPlan, devFree, hostAvail int64) error {
	if p.Device()+FitHeadroom > devFree {
		return fmt.Errorf("%w: needs %s of device memory (+%s headroom), %s free; lower -wires or -log",
			ErrNoFit, stats.FormatGiB(p.Device()), stats.FormatGiB(FitHeadroom), stats.FormatGiB(devFree))
	}
	if hostAvail > 0 && p.Host > hostAvail {
		return fmt.Errorf("%w: needs %s of host memory, %s available; lower -wires or -log",
			ErrNoFit, stats.FormatGiB(p.Host), stats.FormatGiB(hostAvail))
	}
	return nil
}

// HostAvailable returns MemAvailable from /proc/meminfo in bytes, or 0 where
// it cannot be read (the host check is then skipped).
func HostAvailable() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close() // read-only
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
