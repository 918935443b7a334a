package mod

import "testing"

func TestPass(t *testing.T) {}

func TestNoGPU(t *testing.T) { t.Skip("no GPU here: this module has none") }

func TestTool(t *testing.T) { t.Skip("nginx not installed") }
