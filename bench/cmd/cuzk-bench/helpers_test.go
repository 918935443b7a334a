package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/bench/gpubench"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"2^20", 1 << 20, true}, {" 2^0 ", 1, true}, {"1000", 1000, true},
		{"2^41", 0, false}, {"2^", 0, false}, {"0", 0, false}, {"-3", 0, false}, {"x", 0, false},
	} {
		got, err := parseSize(tc.in)
		if !tc.ok {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
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
