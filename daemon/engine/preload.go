package engine

import (
	"context"
	"fmt"

	"github.com/cuzk-dev/cuzk/daemon/keys"
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
	return e.makeHot(ctx, h, e.workers[0])
}

// makeHot makes h's key resident on w's device unless some device holds it
// already or w's device proves from host memory.
func (e *Engine) makeHot(ctx context.Context, h *keys.Handle, w *worker) error {
	for _, o := range e.workers {
		if e.cfg.Keys.IsHotOn(h.Key, o.dev.Name()) {
			return nil
		}
	}
	if !w.dev.Resident() {
		return nil // the CPU proves from the warm key
	}
	if err := e.cfg.Keys.MakeRoomOn(h, w.dev.Name()); err != nil {
		return fmt.Errorf("preload %s: %w", h.Key, err)
	}
	if err := w.dev.Preload(ctx, h.PK); err != nil {
		return fmt.Errorf("preload %s on %s: %w", h.Key, w.dev.Name(), err)
	}
	e.cfg.Keys.MarkHot(h, w.dev.Name())
	return nil
}
