//go:build mage

package main

import (
	"context"
	"fmt"
	"github.com/cuzk-dev/cuzk/cuda/manifest"
	"os"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/client"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// Status compares a running daemon's kernels with this tree's current build keys and says which are stale and why (token: $CUZK_DAEMON_TOKEN).
func Status(ctx context.Context, addr string) error {
	c, err := client.Dial([]string{addr}, client.Config{Token: os.Getenv(client.EnvToken)})
	if err != nil {
		return err
	}
	defer c.Close()
	st, err := c.GetStatus(ctx, &pb.GetStatusRequest{})
	if err != nil {
		return fmt.Errorf("status %s: %w", addr, err)
	}
	var running []manifest.Kernel
	for _, k := range st.GetKernels() {
		running = append(running, manifest.Kernel{Name: k.GetName(), ActionID: k.GetActionId(), ClosureHash: k.GetClosureHash()})
	}
	pins, err := toolchain.LoadEnv()
	if err != nil {
		return err
	}
	e, err := newKernelEngine(ctx, pins, toolchain.Native)
	if err != nil {
		return err
	}
	cmp, err := e.Compare(ctx, running)
	if err != nil {
		return err
	}
	p := st.GetPins()
	fmt.Printf("daemon %s: %s, backend %s; kernels built by nvcc %s, archs %v\n", addr, st.GetVersion(), st.GetBackend(),
		p.GetNvccBuild(), p.GetArchs())
	stale := 0
	for _, s := range cmp {
		if !s.Stale {
			fmt.Printf("  %-12s current  %s\n", s.Name, short(s.Current))
			continue
		}
		stale++
		fmt.Printf("  %-12s STALE    daemon %s, tree %s: %s\n", s.Name, short(s.Running), short(s.Current), join(s.Why))
	}
	if stale > 0 {
		return fmt.Errorf("status: %d of %d kernels in the daemon are not this tree's current build", stale, len(cmp))
	}
	fmt.Println("status: the daemon runs this tree's current kernels")
	return nil
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	if id == "" {
		return "-"
	}
	return id
}
