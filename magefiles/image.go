//go:build mage

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/magefile/mage/mg"

	"github.com/cuzk-dev/cuzk/ci"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// Image targets make cuzk's own pinned CUDA build image.
type Image mg.Namespace

// Lock resolves the build image's Debian 12 package closure with apt in a throwaway root and rewrites toolchain/build-image.lock.json.
func (Image) Lock(ctx context.Context) error {
	start := time.Now()
	if err := installMissing("image:lock", map[string]string{"apt-get": "apt"}); err != nil {
		return err
	}
	pins, err := toolchain.LoadEnv()
	if err != nil {
		return err
	}
	l, changed, err := ci.LockImage(ctx, ".", pins)
	if err != nil {
		return err
	}
	state := "unchanged"
	if changed {
		state = "rewritten"
	}
	fmt.Printf("image:lock: %d packages, lock %s %s, %s\n", len(l.Packages), l.ID().Short(), state, time.Since(start).Round(time.Millisecond))
	return nil
}

// Build builds the pinned build image from the lock (mmdebstrap, go-containerregistry; cached by the lock's hash) and checks its digest against toolchain.yaml.
func (Image) Build(ctx context.Context) error {
	start := time.Now()
	if err := installMissing("image:build", imagePackages); err != nil {
		return err
	}
	opts, err := ci.OptionsFromEnv(ctx, ".", os.Environ())
	if err != nil {
		return err
	}
	opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	r, err := ci.BuildImage(ctx, opts, os.Getenv(ci.EnvImageRepin) == "1")
	if err != nil {
		return err
	}
	state := "built"
	if r.Cached {
		state = "cached"
	}
	fmt.Printf("image:build: %s %s: %.1f MiB compressed, %.1f MiB uncompressed, %s\n  layout %s\n",
		r.Ref, state, float64(r.Compressed)/(1<<20), float64(r.Uncompressed)/(1<<20), time.Since(start).Round(time.Millisecond), r.Layout)
	return nil
}
