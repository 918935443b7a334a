package kbuild

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/cuzk-dev/cuzk/toolchain"
)

// compiler finds nvcc on the first compile an Engine needs, once: a build
// served wholly from the caches never looks for (or installs) a toolkit.
// It is safe for concurrent use; callers wait for the one search.
type compiler struct {
	find func(ctx context.Context) (toolchain.Local, error)
	mu   sync.Mutex
	done bool
	tc   toolchain.Local
	err  error
}

// get returns the toolchain, which must have the identity the keys hold
// (want): a fatbin from another compiler stored under these keys would be
// a lie to every later reader, local or remote.
func (c *compiler) get(ctx context.Context, want toolchain.Identity) (toolchain.Local, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return c.tc, c.err
	}
	tc, err := c.find(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return toolchain.Local{}, err // a cancelled search may be retried
		}
		err = fmt.Errorf("kbuild: find nvcc for the kernels the caches lack: %w", err)
	} else if tc.Identity != want {
		err = fmt.Errorf("kbuild: the toolchain found is not the one the keys name:\n  keys: %s\n  found (%s): %s",
			want, tc.Nvcc, tc.Identity)
	} else if strings.TrimSpace(tc.Nvcc) == "" {
		err = fmt.Errorf("kbuild: the toolchain found has no nvcc")
	}
	c.done, c.tc, c.err = true, tc, err
	return tc, err
}
