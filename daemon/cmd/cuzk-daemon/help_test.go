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

// TestSubcommandHelp: -h, -help, --help and help print a subcommand's usage
// on stdout and exit 0, before any work (selftest runs no kernel, keys
// reads no directory), as "help SUBCOMMAND" does.
func TestSubcommandHelp(t *testing.T) {
	subs := map[string]string{
		"serve":      "-listen",
		"version":    "-json",
		"selftest":   "-seed",
		"import-key": "<name>.rawpk",
		"keys":       "-key-dir",
	}
	for sub, want := range subs {
		for _, args := range [][]string{{sub, "-h"}, {sub, "-help"}, {sub, "--help"}, {sub, "help"}, {"help", sub}} {
			var out, errb bytes.Buffer
			assert.Equal(t, exitOK, run(context.Background(), args, &out, &errb), "%v: %s", args, errb.String())
			assert.Contains(t, out.String(), want, args)
			assert.Empty(t, errb.String(), args)
		}
	}
	var out, errb bytes.Buffer
	assert.Equal(t, exitOK, run(context.Background(), []string{"keys", "rm", "-h"}, &out, &errb), "help after a keys subcommand")
	assert.Contains(t, out.String(), "usage: cuzk-daemon keys")
}

// TestUsageErrorsStillFail: help is no escape hatch for a bad call.
func TestUsageErrorsStillFail(t *testing.T) {
	for _, args := range [][]string{{"version", "-bogus"}, {"selftest", "-n", "x"}, {"import-key", "a"}, {"keys"}, {"keys", "ls", "-bogus"}, {"serve", "-bogus"}} {
		var out, errb bytes.Buffer
		assert.Equal(t, exitUsage, run(context.Background(), args, &out, &errb), "%v", args)
		assert.NotEmpty(t, errb.String(), args)
	}
}
