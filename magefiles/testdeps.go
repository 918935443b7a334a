//go:build mage

package main

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/magefile/mage/sh"

	"github.com/cuzk-dev/cuzk/toolchain"
)

// testPackages are the Debian packages the tests use beyond Go and nvcc:
// protoc (the generated-code check), nginx (the remote cache's server),
// podman and runc (the image tests), mmdebstrap and dpkg-dev (the build
// image's reproducibility test).
var testPackages = map[string]string{"protoc": "protobuf-compiler", "nginx": "nginx", "podman": "podman", "runc": "runc",
	"mmdebstrap": "mmdebstrap", "dpkg-scanpackages": "dpkg-dev"}

// Testdeps installs the Debian packages the tests need (protobuf-compiler, nginx, podman, runc, mmdebstrap, dpkg-dev) where their commands are missing.
func Testdeps() error {
	var missing []string
	for cmd, pkg := range testPackages {
		if _, err := exec.LookPath(cmd); err != nil {
			if _, err := os.Stat("/usr/sbin/" + cmd); err != nil {
				missing = append(missing, pkg)
			}
		}
	}
	if len(missing) == 0 {
		fmt.Println("testdeps: all installed")
		return nil
	}
	if img := os.Getenv(toolchain.EnvImage); img != "" {
		// The build image is pinned and its containers have no network:
		// the tests that need these skip, each saying why.
		fmt.Printf("testdeps: in the build image %s: not installing %v\n", img, missing)
		return nil
	}
	sudo := []string{}
	if os.Geteuid() != 0 {
		sudo = []string{"sudo"}
	}
	run := func(args ...string) error {
		full := append(append([]string{}, sudo...), args...)
		return sh.RunWithV(map[string]string{"DEBIAN_FRONTEND": "noninteractive"}, full[0], full[1:]...)
	}
	fmt.Println("testdeps: installing", missing)
	if err := run("apt-get", "update", "-q"); err != nil {
		return err
	}
	return run(append([]string{"apt-get", "install", "-y", "-q", "--no-install-recommends"}, missing...)...)
}
