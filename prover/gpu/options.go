package gpu

import (
	"fmt"
	"io"
	"log/slog"
)

// config holds a Backend's settings; New fills the defaults and then applies
// the options, which validate their values.
type config struct {
	logger   *slog.Logger
	memLimit int64 // bytes of device memory the Backend may hold; 0: no cap beyond free memory
	chunk    int   // bytes per pinned staging chunk
	tables   int64 // bytes the MSM engine may spend on tables of base multiples
	fbChunk  int   // scalars per fixed-base launch
	fbWindow int   // forced fixed-base window bits (tests); 0: the cost model's
}

// Option configures a Backend. Options reject bad values with an error that
// New returns.
type Option func(*config) error

// Staging chunk bounds: two chunks are pinned per Backend.
const (
	minStagingChunk     = 1 << 20
	maxStagingChunk     = 1 << 30
	defaultStagingChunk = 64 << 20
)

func defaultConfig() config {
	return config{
		logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		chunk:   defaultStagingChunk,
		fbChunk: defaultFixedBaseChunk,
	}
}

// WithLogger sets the logger for device setup, memory and timing records
// (default: discard).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return fmt.Errorf("gpu: nil logger")
		}
		c.logger = l
		return nil
	}
}

// WithMemoryLimit caps the device memory the Backend holds at bytes: the
// NTT work vectors and twiddle tables, and its MSM engine's resident bases
// (with their tables of multiples), stream buffers and scratch. A bases set
// whose full table would exceed it takes fewer copies; an MSM that does not
// fit in one pass runs in chunks (msm_chunk.go), over its bases in place
// where they are resident, else streamed, and Backend.PlanKey plans a whole
// key that way. A job that does not fit even so (a quotient, or chunks of
// 2^14 points) is refused before any allocation with an error wrapping
// ErrDeviceMemory.
func WithMemoryLimit(bytes int64) Option {
	return func(c *config) error {
		if bytes <= 0 {
			return fmt.Errorf("gpu: memory limit %d bytes: must be positive", bytes)
		}
		c.memLimit = bytes
		return nil
	}
}

// WithMSMTableMemory lets the MSM engine spend up to bytes of device memory
// on tables of multiples of the proving key's bases, beyond the bases
// themselves (MSM.SetTableMemory; default 0, none). Tables are built on a
// key's first proof and make its MSMs faster; MSMBytes gives their size.
// The tables count against WithMemoryLimit.
func WithMSMTableMemory(bytes int64) Option {
	return func(c *config) error {
		if bytes < 0 {
			return fmt.Errorf("gpu: MSM table memory %d bytes: must not be negative", bytes)
		}
		c.tables = bytes
		return nil
	}
}

// WithStagingChunk sets the size of each of the two pinned host chunks that
// transfers go through (default 64 MiB; a multiple of 32 bytes in
// [1 MiB, 1 GiB]).
func WithStagingChunk(bytes int) Option {
	return func(c *config) error {
		if bytes < minStagingChunk || bytes > maxStagingChunk || bytes%elemBytes != 0 {
			return fmt.Errorf("gpu: staging chunk %d bytes: want a multiple of %d in [%d, %d]",
				bytes, elemBytes, minStagingChunk, maxStagingChunk)
		}
		c.chunk = bytes
		return nil
	}
}
