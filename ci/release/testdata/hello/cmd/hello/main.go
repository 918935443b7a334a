// Command hello is a throwaway cgo main used to check that release builds
// are byte-identical across directories. It avoids fmt to keep a cold-cache
// build short.
package main

// static int twice(int x) { return 2 * x; }
import "C"

import (
	"os"
	"strconv"
)

func main() { os.Stdout.WriteString("hello " + strconv.Itoa(int(C.twice(21))) + "\n") }
