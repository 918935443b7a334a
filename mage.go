//go:build ignore

// mage.go lets `go run mage.go <target>` run the targets in magefiles/ with
// no mage binary installed; the mage version is the one pinned in go.mod.
//
// It runs them as mage.Main would, in two steps so that the first is never
// silent: it compiles the magefiles (a minute in a fresh clone: every
// module they use) under a progress line, then runs the compiled targets.
// Anything but a plain run of targets (-init, -clean, -compile, -version,
// a bad flag) goes to mage.Main as it is.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/magefile/mage/mage"
	"github.com/magefile/mage/mg"

	"github.com/cuzk-dev/cuzk/internal/progress"
)

func main() {
	inv, cmd, err := mage.Parse(os.Stderr, os.Stdout, os.Args[1:])
	wd, wdErr := os.Getwd()
	if err != nil || cmd != mage.None || inv.CompileOut != "" || wdErr != nil {
		os.Exit(mage.Main())
	}
	inv.Stdout, inv.Stderr, inv.Stdin = os.Stdout, os.Stderr, os.Stdin
	sum := sha256.Sum256([]byte(wd)) // one compiled tool per checkout
	dir := filepath.Join(mg.CacheDir(), "cuzk-"+hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "mage.go: %v: building and running the targets in one step\n", err)
		os.Exit(mage.Main())
	}
	exe := filepath.Join(dir, "mage") // the name its help prints
	build := inv
	build.CompileOut = exe
	os.Stderr.WriteString("mage.go: building the build tool (the magefiles and every module they use; cached after the first time)…\n")
	tk := progress.Start(os.Stderr, "mage.go: still building the build tool")
	code := mage.Invoke(build)
	tk.Stop()
	if code != 0 {
		os.Exit(code)
	}
	os.Exit(mage.RunCompiled(inv, exe, log.New(os.Stderr, "", 0)))
}
