package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIsHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"help"}, true},
		{[]string{"-h"}, true},
		{[]string{"-help"}, true},
		{[]string{"--help"}, true},
		{[]string{"-n", "5", "-h"}, true},
		{[]string{"rm", "-h"}, true},
		{[]string{"rm", "help"}, false},
		{[]string{"--", "-h"}, false},
		{[]string{"-json"}, false},
		{[]string{"--h"}, false},
	} {
		assert.Equal(t, tc.want, IsHelp(tc.args), "%q", tc.args)
	}
}

func TestSubcommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		name string
		rest []string
	}{
		{nil, "", nil},
		{[]string{"help"}, "help", nil},
		{[]string{"-h"}, "help", nil},
		{[]string{"-help"}, "help", nil},
		{[]string{"--help"}, "help", nil},
		{[]string{"help", "serve"}, "serve", []string{"-h"}},
		{[]string{"help", "serve", "extra"}, "serve", []string{"-h"}},
		{[]string{"help", "-h"}, "help", nil},
		{[]string{"-h", "serve"}, "help", nil},
		{[]string{"serve", "-listen", ":1"}, "serve", []string{"-listen", ":1"}},
		{[]string{"version"}, "version", []string{}},
	} {
		name, rest := Subcommand(tc.args)
		assert.Equal(t, tc.name, name, "%q", tc.args)
		assert.Equal(t, tc.rest, rest, "%q", tc.args)
	}
}

// parse runs Parse on a fresh flag set with one flag -n and returns what
// it printed.
func parse(t *testing.T, summary string, hint bool, args ...string) (code int, stop bool, n int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	fs := NewFlagSet("prog", "cmd", "[flags] ARG", summary, &errb)
	if hint {
		fs.HintOnError()
	}
	np := fs.Int("n", 1, "how many")
	code, stop = Parse(fs, args, &out)
	return code, stop, *np, out.String(), errb.String()
}

func TestParseHelpGoesToStdout(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"-help"}, {"--help"}, {"help"}, {"-n", "3", "-h"}, {"ARG", "--help"}} {
		for _, hint := range []bool{false, true} {
			code, stop, _, out, errs := parse(t, "Does the thing.", hint, args...)
			assert.Equal(t, ExitOK, code, "%q", args)
			assert.True(t, stop, "%q", args)
			assert.Equal(t, "usage: prog cmd [flags] ARG\n\nDoes the thing.\n\nflags:\n  -n int\n    \thow many (default 1)\n", out, "%q", args)
			assert.Empty(t, errs, "%q", args)
		}
	}
}

func TestParseBadFlag(t *testing.T) {
	code, stop, _, out, errs := parse(t, "Does the thing.", false, "-bogus")
	assert.Equal(t, ExitUsage, code)
	assert.True(t, stop)
	assert.Empty(t, out)
	assert.Contains(t, errs, "flag provided but not defined: -bogus\nusage: prog cmd [flags] ARG\n")
	assert.Contains(t, errs, "how many", "the whole help on stderr")

	code, stop, _, out, errs = parse(t, "Does the thing.", true, "-n", "x")
	assert.Equal(t, ExitUsage, code)
	assert.True(t, stop)
	assert.Empty(t, out)
	assert.True(t, strings.HasPrefix(errs, `invalid value "x" for flag -n`), errs)
	assert.True(t, strings.HasSuffix(errs, "\nrun \"prog cmd -h\" for its flags\n"), errs)
	assert.NotContains(t, errs, "how many", "a hint, not the whole help")
}

func TestParseGoesOn(t *testing.T) {
	code, stop, n, out, errs := parse(t, "", false, "-n", "7", "ARG")
	assert.Equal(t, ExitOK, code)
	assert.False(t, stop)
	assert.Equal(t, 7, n)
	assert.Empty(t, out+errs)
}

// TestParseHelpFlagOnlyTheFlagPackageKnows: -help=true stops with exit 0
// (the flag package printed the usage on stderr).
func TestParseHelpFlagOnlyTheFlagPackageKnows(t *testing.T) {
	code, stop, _, _, errs := parse(t, "", false, "-help=true")
	assert.Equal(t, ExitOK, code)
	assert.True(t, stop)
	assert.Contains(t, errs, "usage: prog cmd")
}

func TestPrintUsageShapes(t *testing.T) {
	var out bytes.Buffer
	NewFlagSet("prog", "bare", "", "", &out).PrintUsage(&out)
	assert.Equal(t, "usage: prog bare\n", out.String(), "no synopsis, summary or flags")

	out.Reset()
	NewFlagSet("prog", "args", "IN OUT", "Converts IN into OUT.", &out).PrintUsage(&out)
	assert.Equal(t, "usage: prog args IN OUT\n\nConverts IN into OUT.\n", out.String(), "no flags: no flags: line")

	out.Reset()
	fs := NewFlagSet("prog", "short", "[-json]", "", &out)
	fs.Bool("json", false, "one JSON object")
	fs.PrintUsage(&out)
	assert.Equal(t, "usage: prog short [-json]\n  -json\n    \tone JSON object\n", out.String(), "no summary: the flags right below")
}

func TestParseFlagsAnywhere(t *testing.T) {
	for _, tc := range []struct {
		args []string
		n    int
		rest []string
	}{
		{[]string{"JOB", "-n", "3"}, 3, []string{"JOB"}},
		{[]string{"-n", "3", "JOB"}, 3, []string{"JOB"}},
		{[]string{"a", "-n", "4", "b"}, 4, []string{"a", "b"}},
		{[]string{"a", "--", "-n", "5"}, 1, []string{"a", "-n", "5"}},
		{[]string{"--", "-n"}, 1, []string{"-n"}},
		{[]string{"a", "-", "b"}, 1, []string{"a", "-", "b"}},
		{nil, 1, []string{}},
	} {
		var errb bytes.Buffer
		fs := NewFlagSet("prog", "cmd", "", "", &errb)
		n := fs.Int("n", 1, "how many")
		code, stop := Parse(fs, tc.args, &errb)
		assert.Equal(t, ExitOK, code, "%q: %s", tc.args, errb.String())
		assert.False(t, stop, "%q", tc.args)
		assert.Equal(t, tc.n, *n, "%q", tc.args)
		assert.Equal(t, tc.rest, fs.Args(), "%q", tc.args)
		assert.Equal(t, len(tc.rest), fs.NArg())
	}
	var errb bytes.Buffer
	fs := NewFlagSet("prog", "cmd", "", "", &errb)
	fs.Int("n", 1, "how many")
	code, stop := Parse(fs, []string{"JOB", "-bogus"}, &errb)
	assert.Equal(t, ExitUsage, code, "a bad flag after an argument is still a bad flag")
	assert.True(t, stop)
	assert.Contains(t, errb.String(), "-bogus")
}

func TestCommandFirst(t *testing.T) {
	isCmd := func(s string) bool { return s == "status" || s == "await" }
	for _, tc := range []struct{ in, want []string }{
		{[]string{"--addr", "x:1", "status"}, []string{"status", "--addr", "x:1"}},
		{[]string{"-o", "json", "await", "JOB"}, []string{"await", "-o", "json", "JOB"}},
		{[]string{"status", "-o", "json"}, []string{"status", "-o", "json"}},
		{[]string{"-h", "status"}, []string{"-h", "status"}},
		{[]string{"-addr", "x", "--", "status"}, []string{"-addr", "x", "--", "status"}},
		{[]string{"-addr", "x"}, []string{"-addr", "x"}},
		{nil, nil},
	} {
		assert.Equal(t, tc.want, CommandFirst(tc.in, isCmd), "%q", tc.in)
	}
}
