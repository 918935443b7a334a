package gpu

import (
	"fmt"

	"github.com/cuzk-dev/cuzk/cuda"
	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// msmSortKernels are the curve-independent functions of kernel unit
// msm_sort (cuda/kernels/msm_sort.cu).
type msmSortKernels struct {
	mod                                         *driver.Module
	digits, scanUp, scanDown, scatter, taskCnts *driver.Function
	taskClasses, taskOrder                      *driver.Function
}

// msmCurve is one curve's bucket kernels (unit msm_g1 or msm_g2), its
// table kernel (unit msm_table) and the byte sizes of its affine and XYZZ
// points.
type msmCurve struct {
	name                                string
	mod                                 *driver.Module
	accumulate, reduce, bucketSum, fold *driver.Function
	table                               *driver.Function
	pointBytes, xyzzBytes               int
	// bucketWave is how many bucket_sum threads the device runs at once:
	// multiprocessors × resident blocks × msmCurveBlock.
	bucketWave uint32
	// chunkBucketCost is the weight of a bucket against a point in the
	// window choice of a chunk over bases without a table (msmCostBucket,
	// msmCostBucketG2Chunk).
	chunkBucketCost float64
}

// Launch shapes: msmSortBlock must equal kSortBlock in
// cuda/include/cuzk/msm_sort.cuh, whose block-wise kernels
// (msm_task_classes, msm_task_order) assume it. The curve kernels hold a
// whole XYZZ point and field temporaries in registers (about 128–255 per
// thread), so they run in small blocks. msmCurveBlock must equal kCurveBlock in
// cuda/include/cuzk/msm_bucket.cuh, which sizes G2 accumulate's
// shared-memory slots (one pair per thread).
const (
	msmSortBlock  = 256
	msmCurveBlock = 128
)

func loadMSMModule(c *driver.Ctx, unit string, fns map[string]**driver.Function) (*driver.Module, error) {
	fb, err := cuda.Fatbin(unit)
	if err != nil {
		return nil, fmt.Errorf("msm kernels %s: %w", unit, err)
	}
	mod, err := c.LoadModule(fb)
	if err != nil {
		return nil, fmt.Errorf("msm kernels %s: load module: %w", unit, err)
	}
	for name, dst := range fns {
		if *dst, err = c.Function(mod, name); err != nil {
			_ = c.Unload(mod) // the lookup error is the one to report
			return nil, fmt.Errorf("msm kernels %s: %w", unit, err)
		}
	}
	return mod, nil
}

func loadMSMSortKernels(c *driver.Ctx) (*msmSortKernels, error) {
	k := &msmSortKernels{}
	var err error
	k.mod, err = loadMSMModule(c, "msm_sort", map[string]**driver.Function{
		"msm_digits": &k.digits, "msm_scan_up": &k.scanUp, "msm_scan_down": &k.scanDown,
		"msm_scatter": &k.scatter, "msm_task_counts": &k.taskCnts,
		"msm_task_classes": &k.taskClasses, "msm_task_order": &k.taskOrder,
	})
	return k, err
}

// loadMSMTables loads unit msm_table; loadMSMCurve takes each curve's table
// kernel from it.
func loadMSMTables(c *driver.Ctx) (*driver.Module, error) {
	return loadMSMModule(c, "msm_table", nil)
}

func loadMSMCurve(c *driver.Ctx, name string, tables *driver.Module, pointBytes, xyzzBytes int) (*msmCurve, error) {
	k := &msmCurve{name: name, pointBytes: pointBytes, xyzzBytes: xyzzBytes, chunkBucketCost: msmCostBucket}
	if name == "g2" {
		k.chunkBucketCost = msmCostBucketG2Chunk
	}
	var err error
	if k.table, err = c.Function(tables, "msm_"+name+"_table"); err != nil {
		return k, fmt.Errorf("msm kernels msm_table: %w", err)
	}
	fns := map[string]**driver.Function{
		"msm_" + name + "_accumulate": &k.accumulate, "msm_" + name + "_reduce": &k.reduce,
		"msm_" + name + "_bucket_sum": &k.bucketSum, "msm_" + name + "_bucket_fold": &k.fold,
	}
	if k.mod, err = loadMSMModule(c, "msm_"+name, fns); err != nil {
		return k, err
	}
	blocks, err := c.ActiveBlocks(k.bucketSum, msmCurveBlock, 0)
	if err != nil {
		return k, fmt.Errorf("msm kernels %s: %w", name, err)
	}
	k.bucketWave = uint32(max(1, blocks*c.Device().Info().Multiprocessors) * msmCurveBlock)
	return k, nil
}

// launch1D runs f over threads threads in blocks of block; none when
// threads is 0.
func launch1D(c *driver.Ctx, f *driver.Function, threads uint64, block uint32, args ...any) error {
	if threads == 0 {
		return nil
	}
	grid := (threads + uint64(block) - 1) / uint64(block)
	if grid > 1<<31-1 {
		return fmt.Errorf("launch %s: %d threads exceed the grid", f.Name(), threads)
	}
	cfg := driver.LaunchConfig{Grid: driver.Dim3{X: uint32(grid)}, Block: driver.Dim3{X: block}}
	return c.Launch(f, cfg, args...)
}
