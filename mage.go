//go:build ignore

// mage.go lets `go run mage.go <target>` run the targets in magefiles/ with
// no mage binary installed; the mage version is the one pinned in go.mod.
package main

import (
	"os"

	"github.com/magefile/mage/mage"
)

func main() { os.Exit(mage.Main()) }
