// Command stamped prints buildinfo.Get() as JSON: the buildinfo tests build
// it with and without the release stamp.
package main

import (
	"encoding/json"
	"os"

	"github.com/cuzk-dev/cuzk/internal/buildinfo"
)

func main() {
	if err := json.NewEncoder(os.Stdout).Encode(buildinfo.Get()); err != nil {
		os.Exit(1)
	}
}
