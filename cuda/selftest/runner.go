package selftest

import (
	"errors"
	"fmt"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/cuda"
	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// blockSize is the threads per block of every launch; blocksPerSM caps the
// grid of the grid-stride kernels at a few resident blocks per SM.
const (
	blockSize   = 256
	blocksPerSM = 8
)

// runner holds the device buffers and loaded modules of one Run.
type runner struct {
	dev     *driver.Device
	n       int
	a, b, o driver.DevicePtr
	modules map[string]*driver.Module
}

func newRunner(dev *driver.Device, n int) (*runner, error) {
	r := &runner{dev: dev, n: n, modules: map[string]*driver.Module{}}
	size := n * fr.Bytes
	err := dev.Do(func(c *driver.Ctx) (err error) {
		for _, p := range []*driver.DevicePtr{&r.a, &r.b, &r.o} {
			if *p, err = c.Alloc(size); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("selftest: allocate 3×%d bytes: %w", size, err), r.close())
	}
	return r, nil
}

// function returns kernel k, loading its fatbin on first use.
func (r *runner) function(c *driver.Ctx, k kernelCase) (*driver.Function, error) {
	m, ok := r.modules[k.unit]
	if !ok {
		img, err := cuda.Fatbin(k.unit)
		if err != nil {
			return nil, fmt.Errorf("load fatbin %s: %w", k.unit, err)
		}
		if m, err = c.LoadModule(img); err != nil {
			return nil, fmt.Errorf("load fatbin %s: %w", k.unit, err)
		}
		r.modules[k.unit] = m
	}
	return c.Function(m, k.fn)
}

// run copies the inputs in, launches k twice (warm-up, then timed), and
// copies the output into got. It returns the timed launch's device time.
func (r *runner) run(k kernelCase, a, b, got []fr.Element) (el time.Duration, err error) {
	err = r.dev.Do(func(c *driver.Ctx) error {
		f, err := r.function(c, k)
		if err != nil {
			return err
		}
		if err := c.HtoD(r.a, driver.Bytes(a)); err != nil {
			return err
		}
		args := []any{r.o, r.a, uint64(r.n)}
		if k.binary {
			if err := c.HtoD(r.b, driver.Bytes(b)); err != nil {
				return err
			}
			args = []any{r.o, r.a, r.b, uint64(r.n)}
		}
		cfg := r.config()
		if err := c.Launch(f, cfg, args...); err != nil {
			return err
		}
		if el, err = timeLaunch(c, func() error { return c.Launch(f, cfg, args...) }); err != nil {
			return err
		}
		return c.DtoH(driver.Bytes(got), r.o)
	})
	return el, err
}

func (r *runner) config() driver.LaunchConfig {
	blocks := (r.n + blockSize - 1) / blockSize
	blocks = min(blocks, blocksPerSM*max(1, r.dev.Info().Multiprocessors))
	return driver.LaunchConfig{Grid: driver.Dim3{X: uint32(blocks)}, Block: driver.Dim3{X: blockSize}}
}

// timeLaunch brackets enqueue with events on the default stream and returns
// the device time between them.
func timeLaunch(c *driver.Ctx, enqueue func() error) (time.Duration, error) {
	start, err := c.NewEvent()
	if err != nil {
		return 0, err
	}
	end, err := c.NewEvent()
	if err != nil {
		return 0, errors.Join(err, c.DestroyEvent(start))
	}
	err = errors.Join(c.Record(start, nil), enqueue(), c.Record(end, nil), c.SyncEvent(end))
	var el time.Duration
	if err == nil {
		el, err = c.Elapsed(start, end)
	}
	return el, errors.Join(err, c.DestroyEvent(start), c.DestroyEvent(end))
}

// close frees the buffers and unloads the modules.
func (r *runner) close() error {
	return r.dev.Do(func(c *driver.Ctx) error {
		errs := []error{c.Free(r.a), c.Free(r.b), c.Free(r.o)}
		for _, m := range r.modules {
			errs = append(errs, c.Unload(m))
		}
		return errors.Join(errs...)
	})
}
