// Command cuzk-daemon stands in for the real daemon in release tests: a pure
// Go main, so the bundle carries one cgo and one non-cgo binary.
package main

import (
	"os"
	"strconv"
)

func main() { os.Stdout.WriteString("daemon " + strconv.Itoa(len(os.Args)) + "\n") }
