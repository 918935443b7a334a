package loadbench

import "github.com/cuzk-dev/cuzk/daemon/keys"

// keysFor opens the daemon's key directory for the direct path (the same
// development keys, loaded from the files the daemon wrote).
func keysFor(dir string) (*keys.Manager, error) { return keys.New(keys.Config{Dir: dir, DevSeed: 1}) }
