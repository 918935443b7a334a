package report

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTable(t *testing.T) {
	tb := NewTable("name", "value")
	tb.Add("long name here", "1")
	tb.Add("x", "12345")
	var out bytes.Buffer
	require.NoError(t, tb.Write(&out))
	assert.Equal(t, "name            value\n--------------  -----\nlong name here      1\nx               12345\n", out.String())
}

func TestTableCountsRunes(t *testing.T) {
	tb := NewTable("phase", "ms")
	tb.Add("MSM L‖H", "1")
	var out bytes.Buffer
	require.NoError(t, tb.Write(&out))
	assert.Equal(t, "phase    ms\n-------  --\nMSM L‖H   1\n", out.String())
}

func TestMedian(t *testing.T) {
	assert.Equal(t, time.Duration(0), Median(nil))
	assert.Equal(t, 3*time.Millisecond, Median([]time.Duration{5, 1, 3})*time.Millisecond)
	assert.Equal(t, 2*time.Millisecond, Median([]time.Duration{4, 1, 3, 0})*time.Millisecond)
	s := []time.Duration{3, 1, 2}
	Median(s)
	assert.Equal(t, []time.Duration{3, 1, 2}, s, "the samples keep their order")
}
