package buildbench

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"time"
)

func nop(string) error { return nil }

// sequence runs the scripted steps: cold build, no-op, header edit and its
// revert, a branch switch A→B→A, a flag change, and touching every source.
// The edited files are picked after the cold build, from its costs.
func (b *bench) sequence(ctx context.Context) error {
	if err := b.step(ctx, "1 cold build", nop); err != nil {
		return err
	}
	if err := b.pick(ctx); err != nil {
		return err
	}
	p := b.res.Picks
	orig := map[string][]byte{}
	for _, rel := range []string{p.Header, p.SwitchHeader, p.SwitchSource} {
		data, err := os.ReadFile(filepath.Join(b.cuzk.root, filepath.FromSlash(rel)))
		if err != nil {
			return fmt.Errorf("buildbench: %w", err)
		}
		orig[rel] = data
	}
	h, sh, ss := path.Base(p.Header), path.Base(p.SwitchHeader), path.Base(p.SwitchSource)
	steps := []struct {
		name   string
		change func(root string) error
	}{
		{"2 no-op", nop},
		{"3 edit " + h, func(r string) error { return appendLine(r, p.Header, "header edit") }},
		{"4 revert " + h, func(r string) error { return restore(r, p.Header, orig[p.Header]) }},
		{"5 switch A→B (" + sh + ", " + ss + ")", func(r string) error {
			if err := appendLine(r, p.SwitchHeader, "branch B"); err != nil {
				return err
			}
			return appendLine(r, p.SwitchSource, "branch B")
		}},
		{"5 switch B→A", func(r string) error {
			if err := restore(r, p.SwitchHeader, orig[p.SwitchHeader]); err != nil {
				return err
			}
			return restore(r, p.SwitchSource, orig[p.SwitchSource])
		}},
		{"6 flag " + b.cfg.Flag, func(r string) error { return b.addFlag(ctx, r) }},
		{"7 touch all sources", func(r string) error { return touchAll(r, b.cfg.dirs()) }},
	}
	for _, s := range steps {
		if err := b.step(ctx, s.name, s.change); err != nil {
			return err
		}
	}
	return nil
}

// addFlag adds the configured flag for the builder of the tree at root: the
// engine's pins, or a regenerated build.ninja with the new commands (step
// changes the engine's tree first, so the plan already has the flag).
func (b *bench) addFlag(ctx context.Context, root string) error {
	if root == b.cuzk.root {
		b.cuzk.pins.Flags = append(append([]string(nil), b.cuzk.pins.Flags...), b.cfg.Flag)
		return b.cuzk.pins.Validate()
	}
	return b.regenerate(ctx)
}

// pick chooses the edited files from ninja's dependency log and the
// engine's per-unit compile times in the cold build.
func (b *bench) pick(ctx context.Context) error {
	deps, err := b.ninja.deps(ctx)
	if err != nil {
		return fmt.Errorf("buildbench: %w", err)
	}
	sources, cost := map[string]string{}, map[string]time.Duration{}
	for _, r := range b.cuzk.last.Results {
		sources[r.Unit.Name] = r.Unit.Source
		cost[r.Unit.Name] = r.Duration
	}
	b.res.Picks, err = choose(deps, sources, cost)
	if err != nil {
		return fmt.Errorf("buildbench: %w", err)
	}
	return nil
}
