package engine

import (
	"context"
	"fmt"

	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
)

// Preload makes c's key warm and, with hot, resident on a device: the one
// already holding it, else the first device in order whose budget admits
// it. It runs beside the workers: device work is serialized by the device.
// A key that can never fit is refused before any work (Admit).
func (e *Engine) Preload(ctx context.Context, c *registry.Resolved, hot bool) error {
	if _, err := e.Admit(ctx, c, 0); err != nil {
		return fmt.Errorf("preload %s: %w", c.Key, err)
	}
	h, err := e.cfg.Keys.Acquire(ctx, c)
	if err != nil {
		return fmt.Errorf("preload %s: %w", c.Key, err)
	}
	defer h.Release()
	if !hot {
		return nil
	}
	for _, w := range e.workers {
		if e.cfg.Keys.IsHotOn(h.Key, w.dev.Name()) {
			return nil
		}
	}
	w := e.workers[0]
	if !w.dev.Resident() {
		return nil // the CPU proves from the warm key
	}
	if err := e.cfg.Keys.MakeRoomOn(h, w.dev.Name()); err != nil {
		return fmt.Errorf("preload %s: %w", c.Key, err)
	}
	if err := w.dev.Preload(ctx, h.PK); err != nil {
		return fmt.Errorf("preload %s on %s: %w", c.Key, w.dev.Name(), err)
	}
	e.cfg.Keys.MarkHot(h, w.dev.Name())
	return nil
}
