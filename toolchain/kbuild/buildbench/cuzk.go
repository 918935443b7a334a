package buildbench

import (
	"context"

	"github.com/cuzk-dev/cuzk/toolchain"
	"github.com/cuzk-dev/cuzk/toolchain/cas"
	"github.com/cuzk-dev/cuzk/toolchain/kbuild"
)

// cuzkTree drives the kernel engine over its copy of the tree, with a fresh
// engine per build as each `mage build` process makes one.
type cuzkTree struct {
	root   string
	layout kbuild.Layout
	pins   toolchain.Pins
	tc     toolchain.Local
	store  *cas.Store
	jobs   int
	last   kbuild.Report
}

func (c *cuzkTree) engine() (*kbuild.Engine, error) {
	return kbuild.New(c.root, c.pins, c.tc, c.store, kbuild.WithLayout(c.layout), kbuild.WithJobs(c.jobs))
}

func (c *cuzkTree) build(ctx context.Context) error {
	e, err := c.engine()
	if err != nil {
		return err
	}
	c.last, err = e.Build(ctx)
	return err
}

func (c *cuzkTree) plan(ctx context.Context) ([]kbuild.Unit, error) {
	e, err := c.engine()
	if err != nil {
		return nil, err
	}
	return e.Plan(ctx)
}
