package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"-help"}, {"--help"}, {"help"}, {"help", "serve"}} {
		var out, errb bytes.Buffer
		assert.Equal(t, exitOK, run(context.Background(), args, &out, &errb), "%v: %s", args, errb.String())
		assert.Contains(t, out.String()+errb.String(), "serve", args)
	}
}
