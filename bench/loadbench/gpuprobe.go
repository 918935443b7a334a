package loadbench

import (
	"errors"
	"sync"
	"time"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// gpuProbe samples a GPU's free memory through a driver handle of its own
// (the device's primary context, which the daemon shares), from before the
// daemon starts to the end of the run: the drop from the first sample to
// the lowest is the device memory the run used by the driver's count.
type gpuProbe struct {
	dev     *driver.Device
	free0   int64
	minFree int64
	err     error
	mu      sync.Mutex
	quit    chan struct{}
	done    chan struct{}
}

// startGPUProbe starts the probe on cfg's first GPU; on the CPU backend,
// or where no GPU opens, the probe measures nothing and says why.
func startGPUProbe(cfg C2Config) *gpuProbe {
	p := &gpuProbe{quit: make(chan struct{}), done: make(chan struct{})}
	if cfg.Backend == "cpu" {
		p.err = errors.New("the CPU backend")
		close(p.done)
		return p
	}
	ord := 0
	if len(cfg.GPUs) > 0 {
		ord = cfg.GPUs[0]
	}
	if p.dev, p.err = driver.Open(ord); p.err != nil {
		close(p.done)
		return p
	}
	if p.free0, p.err = p.free(); p.err != nil {
		close(p.done)
		return p
	}
	p.minFree = p.free0
	go func() {
		defer close(p.done)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.quit:
				return
			case <-t.C:
			}
			if f, err := p.free(); err == nil {
				p.mu.Lock()
				p.minFree = min(p.minFree, f)
				p.mu.Unlock()
			}
		}
	}()
	return p
}

func (p *gpuProbe) free() (free int64, err error) {
	err = p.dev.Do(func(c *driver.Ctx) (err error) {
		free, _, err = c.MemInfo()
		return err
	})
	return free, err
}

// stop ends the sampling after one last sample and returns the most device
// memory the run used by the driver's count.
func (p *gpuProbe) stop() (int64, error) {
	if p.dev == nil || p.err != nil {
		if p.dev != nil {
			_ = p.dev.Close() // the probe's error is the one to report
		}
		return 0, p.err
	}
	close(p.quit)
	<-p.done
	if f, err := p.free(); err == nil {
		p.minFree = min(p.minFree, f)
	}
	return p.free0 - p.minFree, p.dev.Close()
}
