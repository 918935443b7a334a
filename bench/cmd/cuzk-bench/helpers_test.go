package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/bench/gpubench"
)

func TestParseLogList(t *testing.T) {
	logs, err := parseLogList("2^24, 2^20,,1024")
	require.NoError(t, err)
	assert.Equal(t, []int{24, 20, 10}, logs)
}

func TestPrintMemPlan(t *testing.T) {
	s := gpubench.Shape{Log: 20, Wires: 1 << 19, BWires: 1 << 18}
	p, err := gpubench.PlanMemory(s)
	require.NoError(t, err)
	var out bytes.Buffer
	printMemPlan(&out, s, p, 139<<30, 0)
	assert.Contains(t, out.String(), "device total")
	assert.Contains(t, out.String(), "524288+262144+1572862")
	assert.Regexp(t, `host available now +- +unknown`, out.String())
}
