//go:build mage

package main

import (
	"fmt"
	"os"
	"os/exec"
	"sort"

	"github.com/magefile/mage/sh"

	"github.com/cuzk-dev/cuzk/toolchain"
)

// testPackages are the Debian packages the tests use beyond Go and nvcc:
// protoc (the generated-code check), nginx (the remote cache's server),
// podman and runc (the image tests and the podman executor), ninja (the
// build engine's comparison), and what the build image is made with.
var testPackages = map[string]string{"protoc": "protobuf-compiler", "nginx": "nginx", "podman": "podman", "runc": "runc",
	"ninja": "ninja-build"}

// imagePackages are what `image:build` runs: mmdebstrap lays the root
// down, dpkg-scanpackages indexes the local repository.
var imagePackages = map[string]string{"mmdebstrap": "mmdebstrap", "dpkg-scanpackages": "dpkg-dev"}

// Testdeps installs the Debian packages the tests need (protobuf-compiler, nginx, podman, runc, ninja-build, mmdebstrap, dpkg-dev) where their commands are missing.
func Testdeps() error {
	all := map[string]string{}
	for _, m := range []map[string]string{testPackages, imagePackages} {
		for k, v := range m {
			all[k] = v
		}
	}
	return installMissing("testdeps", all)
}

// installMissing installs with apt the package of every command in cmds
// that is not on PATH (nor in /usr/sbin). Inside the build image it only
// says what is missing: the image is pinned and its containers have no
// network, so the tests that need them skip, each saying why.
func installMissing(who string, cmds map[string]string) error {
	var missing []string
	for cmd, pkg := range cmds {
		if _, err := exec.LookPath(cmd); err != nil {
			if _, err := os.Stat("/usr/sbin/" + cmd); err != nil {
				missing = append(missing, pkg)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) == 0 {
		fmt.Printf("%s: all installed\n", who)
		return nil
	}
	if img := os.Getenv(toolchain.EnvImage); img != "" {
		fmt.Printf("%s: in the build image %s: not installing %v\n", who, img, missing)
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
	fmt.Printf("%s: installing %v\n", who, missing)
	if err := run("apt-get", "update", "-q"); err != nil {
		return err
	}
	return run(append([]string{"apt-get", "install", "-y", "-q", "--no-install-recommends"}, missing...)...)
}
