package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunMeasuresTheLongestSilence(t *testing.T) {
	var echo bytes.Buffer
	r, err := Run(context.Background(), []string{"sh", "-c", "echo a; sleep 0.1; echo b; sleep 0.6; echo c >&2; printf 'live\\r'; sleep 0.1"}, &echo)
	require.NoError(t, err)
	assert.Equal(t, "a\nb\nc\nlive\r", echo.String(), "the output passes through")
	assert.Equal(t, 4, r.Lines)
	assert.Equal(t, "c", r.After, "the 0.6 s silence ended with c, on stderr")
	assert.InDelta(t, 0.6, r.Longest.Seconds(), 0.4)
	assert.Equal(t, 0, r.Exit)
	assert.GreaterOrEqual(t, r.Wall, 800*time.Millisecond)
	assert.True(t, strings.HasSuffix(r.Summary(15*time.Second), "; 4 lines in "+r.Wall.Round(100*time.Millisecond).String()+", exit status 0"), r.Summary(15*time.Second))
	assert.Contains(t, r.Summary(100*time.Millisecond), "TOO LONG (max 100ms)")
}

func TestRunCountsTheEndAndTheExit(t *testing.T) {
	r, err := Run(context.Background(), []string{"sh", "-c", "echo a; sleep 0.5; exit 3"}, &bytes.Buffer{})
	require.Error(t, err)
	assert.Equal(t, 3, r.Exit)
	assert.Empty(t, r.After, "the longest silence was before the end")
	assert.Contains(t, r.Summary(time.Minute), "before the end")
	_, err = Run(context.Background(), []string{"/nonexistent/command"}, &bytes.Buffer{})
	assert.Error(t, err)
}
