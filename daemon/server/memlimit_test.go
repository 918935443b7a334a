package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMemoryLimitFromOptions(t *testing.T) {
	o := DefaultOptions()
	assert.Zero(t, memoryLimit(o, false), "no budgets, no limit")
	o.HostKeyBudget, o.HostJobBudget = 60<<30, 34<<30
	assert.Equal(t, int64(98<<30), memoryLimit(o, false), "both budgets and 4 GiB")
	assert.Zero(t, memoryLimit(o, true), "GOMEMLIMIT, read by the runtime, wins over the derived limit")
	o.MemoryLimit = 1 << 30
	assert.Equal(t, int64(1<<30), memoryLimit(o, true), "an explicit limit wins")
}
