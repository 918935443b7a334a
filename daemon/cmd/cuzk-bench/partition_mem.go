package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/internal/report"
	"github.com/cuzk-dev/cuzk/prover/gpu"
)

// errNoFit reports a partition that does not fit in this machine's memory.
var errNoFit = errors.New("partition does not fit")

// Sizes of host-side points (gnark-crypto's affine layout, which the MSM
// engine uploads as is).
const (
	g1Bytes = int64(unsafe.Sizeof(bls12381.G1Affine{}))
	g2Bytes = int64(unsafe.Sizeof(bls12381.G2Affine{}))
)

// partitionShape is the size of one partition: domain 2^log, wires in the
// A MSM (one public, the rest private), bWires in both B MSMs.
type partitionShape struct {
	log, wires, bWires int
}

func (s partitionShape) n() int { return 1 << s.log }

// lh is the size of the MSM over L‖H: the private wires and the quotient's
// n − 1 coefficients.
func (s partitionShape) lh() int { return s.wires - 1 + s.n() - 1 }

// memPlan is the memory one partition needs, device and host, in bytes.
type memPlan struct {
	basesG1, basesG2, quotient, scratch int64
	host                                int64
}

func (p memPlan) device() int64 { return p.basesG1 + p.basesG2 + p.quotient + p.scratch }

// planMemory sizes the partition: the resident bases of the four MSMs, the
// quotient's vectors and twiddles (gpu.QuotientHBytes) and the MSM engine's
// scratch for its largest MSM (L‖H in G1 or B in G2, gpu.MSMBytes); host
// side the tiled bases, a, b, c and the buffer wires ‖ h (the L‖H scalars
// behind the first wire).
func planMemory(s partitionShape) (memPlan, error) {
	n, lh := int64(s.n()), int64(s.lh())
	g1Points := int64(s.wires) + int64(s.bWires) + lh
	_, scratchB, err := gpu.MSMBytes(s.bWires, true, 0)
	if err != nil {
		return memPlan{}, err
	}
	_, scratchLH, err := gpu.MSMBytes(int(lh), false, 0)
	if err != nil {
		return memPlan{}, err
	}
	p := memPlan{
		basesG1:  g1Points * g1Bytes,
		basesG2:  int64(s.bWires) * g2Bytes,
		quotient: gpu.QuotientHBytes(uint32(s.log)),
		scratch:  max(scratchB, scratchLH),
	}
	p.host = p.basesG1 + p.basesG2 + (3*n+int64(s.wires)+n-1)*fr.Bytes
	return p, nil
}

// printMemPlan writes the plan as a table, with what is free beside it.
func printMemPlan(w io.Writer, s partitionShape, p memPlan, devFree, hostAvail int64) {
	t := report.NewTable("memory", "items", "size")
	t.Add("G1 bases (A, B, L‖H)", fmt.Sprintf("%d+%d+%d", s.wires, s.bWires, s.lh()), gib(p.basesG1))
	t.Add("G2 bases (B)", fmt.Sprint(s.bWires), gib(p.basesG2))
	t.Add("QuotientH vectors + twiddles", fmt.Sprintf("3×2^%d", s.log), gib(p.quotient))
	t.Add("MSM scratch (largest MSM)", "-", gib(p.scratch))
	t.Add("device total", "-", gib(p.device()))
	t.Add("device free now", "-", gib(devFree))
	t.Add("host: bases, a, b, c, wires ‖ h", "-", gib(p.host))
	hostCell := "unknown"
	if hostAvail > 0 {
		hostCell = gib(hostAvail)
	}
	t.Add("host available now", "-", hostCell)
	t.Write(w)
}

// fitHeadroom is device memory left for the driver, modules, staging and the
// small buffers the plan does not count.
const fitHeadroom = 2 << 30

// checkFit refuses a plan that does not fit, before anything is allocated.
func checkFit(p memPlan, devFree, hostAvail int64) error {
	if p.device()+fitHeadroom > devFree {
		return fmt.Errorf("%w: needs %s of device memory (+%s headroom), %s free; lower -wires or -log",
			errNoFit, gib(p.device()), gib(fitHeadroom), gib(devFree))
	}
	if hostAvail > 0 && p.host > hostAvail {
		return fmt.Errorf("%w: needs %s of host memory, %s available; lower -wires or -log",
			errNoFit, gib(p.host), gib(hostAvail))
	}
	return nil
}

// hostAvailable returns MemAvailable from /proc/meminfo in bytes, or 0 where
// it cannot be read (the host check is then skipped).
func hostAvailable() int64 {
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
