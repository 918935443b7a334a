// Command hello is a throwaway cgo main used to check that release builds
// are byte-identical across directories.
package main

// static int twice(int x) { return 2 * x; }
import "C"

import "fmt"

func main() { fmt.Println("hello", int(C.twice(21))) }
