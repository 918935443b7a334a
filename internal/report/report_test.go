package report

import (
	"bytes"
	"testing"

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
