package gpubench

import "time"

// KernelsConfig says which kernels the kernels benchmark times.
type KernelsConfig struct {
	G1, G2, NTT []int // sizes, log2, ascending
	Runs        int   // timed runs per kernel and size, after one warm-up
	Seed        uint64
	Tile        int   // distinct random points tiled into the bases
	DirectMax   int   // largest MSM checked on the full input (larger: folded to the tile)
	Tables      int64 // MSM table memory in bytes (gpu.MSM.SetTableMemory); 0: none
	// Streamed are G1 sizes (log2) run again with their bases streamed from
	// page-locked host memory in chunks of StreamChunk points
	// (gpu.MSM.PlanG1), as a key too large for the device runs.
	Streamed    []int
	StreamChunk int
	// Batch, above 1, times the streamed sizes again as batches of that
	// many scalar vectors over the same bases (gpu.MSM.G1Batch).
	Batch int
}

// KernelRow is one kernel at one size: medians of the timed runs.
type KernelRow struct {
	Kernel          string
	LogN, Bits      int
	Copies, Windows int // MSM table copies read (1: the bases alone), bucket windows
	// Build is the upload and build of the bases' table (0: no table).
	Build time.Duration
	// Device is the GPU time with the inputs resident, E2E one whole call,
	// Transfer the call's transfers.
	Device, E2E, Transfer time.Duration
	Est                   time.Duration // the modmul-bound estimate
	Sppark                float64       // sppark's H200 figure in ms (0: none)
	Check                 string        // the check against gnark-crypto: "ok: …", "MISMATCH…", "not run"
}
