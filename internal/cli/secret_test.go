package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSecretVarNeverShowsTheValue(t *testing.T) {
	const secretValue = "s3cret-0123456789"
	for _, env := range []string{secretValue, ""} {
		var out bytes.Buffer
		fs := NewFlagSet("prog", "cmd", "", "Does the thing.", &out)
		var tok string
		SecretVar(fs.FlagSet, &tok, "token", "PROG_TOKEN", "the bearer `TOKEN`", func(k string) string {
			if k == "PROG_TOKEN" {
				return env
			}
			return ""
		})
		assert.Equal(t, env, tok, "the default is the variable's value")
		fs.PrintUsage(&out)
		if env != "" {
			assert.Contains(t, out.String(), "-token TOKEN\n    \tthe bearer TOKEN (set from $PROG_TOKEN)\n")
			assert.NotContains(t, out.String(), secretValue)
		} else {
			assert.Contains(t, out.String(), "the bearer TOKEN ($PROG_TOKEN is not set)\n")
		}
		require.NoError(t, fs.Parse([]string{"-token", "given"}))
		assert.Equal(t, "given", tok, "a flag wins over the variable")
		out.Reset()
		fs.PrintUsage(&out)
		assert.NotContains(t, out.String(), "given", "nor after it was set")
	}
}

// secretEnv are the variables that hold a secret somewhere in cuzk (the
// daemon's token, the remote cache's token, the signing key, OIDC tokens),
// each set to a value no help text could contain by chance.
var secretEnv = []string{"CUZK_DAEMON_TOKEN", "CUZK_REMOTE_CACHE_TOKEN", "CUZK_SIGNING_KEY", "SIGSTORE_ID_TOKEN",
	"ACTIONS_ID_TOKEN_REQUEST_TOKEN", "GITHUB_TOKEN"}

// TestNoBinaryPrintsASecretInItsHelp builds every main package of the
// module but the test harnesses under internal/ and the magefiles, then
// runs each binary's help, the help of every subcommand its help lists
// (both "-h" and "help CMD") and, for the daemon's client, a command that
// fails to reach a daemon, with every secretEnv variable set: no output may
// contain a secret's value.
func TestNoBinaryPrintsASecretInItsHelp(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: builds every binary of the module")
	}
	root := moduleRoot(t)
	list := exec.Command("go", "list", "-f", `{{if eq .Name "main"}}{{.ImportPath}}{{end}}`, "./...")
	list.Dir = root
	b, err := list.Output()
	require.NoError(t, err)
	var pkgs []string
	for _, p := range strings.Fields(string(b)) {
		if strings.Contains(p, "/internal/") || strings.HasSuffix(p, "/magefiles") {
			continue // test harnesses and the build tool's own main, never installed
		}
		pkgs = append(pkgs, p)
	}
	require.GreaterOrEqual(t, len(pkgs), 4, "cuzk, cuzk-daemon, cuzk-bench, cuzk-proverbench at least: %v", pkgs)
	bin := t.TempDir()
	build := exec.Command("go", append([]string{"build", "-o", bin + "/"}, pkgs...)...)
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	values := map[string]string{}
	env := os.Environ()
	for i, k := range secretEnv {
		values[k] = "SECRET-" + strings.Repeat(string(rune('A'+i)), 24)
		env = append(env, k+"="+values[k])
	}
	runs := 0
	for _, pkg := range pkgs {
		exe := filepath.Join(bin, filepath.Base(pkg))
		top := runHelp(t, exe, env, values, "-h")
		runHelp(t, exe, env, values, "help")
		runs += 2
		for _, sub := range listedCommands(filepath.Base(pkg), top) {
			runHelp(t, exe, env, values, sub, "-h")
			runHelp(t, exe, env, values, "help", sub)
			runs += 2
		}
	}
	t.Logf("%d help texts of %d binaries checked", runs, len(pkgs))
	// An error and a JSON answer with the token in play.
	cuzk := filepath.Join(bin, "cuzk")
	for _, args := range [][]string{{"status", "-addr", "unix:" + filepath.Join(bin, "none.sock"), "-timeout", "2s"},
		{"status", "-o", "json", "-addr", "unix:" + filepath.Join(bin, "none.sock"), "-timeout", "2s"}} {
		runHelp(t, cuzk, env, values, args...)
	}
}

// runHelp runs exe with args and fails if its output holds a secret's
// value; it returns stdout and stderr together.
func runHelp(t *testing.T, exe string, env []string, values map[string]string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = env
	out, _ := cmd.CombinedOutput() // the exit status is not the point: what was printed is
	require.NoError(t, ctx.Err(), "%s %v did not finish", exe, args)
	for k, v := range values {
		assert.NotContains(t, string(out), v, "%s %v prints $%s", filepath.Base(exe), args, k)
	}
	return string(out)
}

// listedCommands reads the subcommands a binary's help lists: the
// indented first words under "commands:", or the alternatives of a
// one-line "usage: PROG a ... | b ... | c".
func listedCommands(prog, help string) []string {
	var subs []string
	inList := false
	for _, line := range strings.Split(help, "\n") {
		switch {
		case strings.HasPrefix(line, "commands:"):
			inList = true
		case inList && strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   "):
			subs = append(subs, strings.Fields(line)[0])
		case inList && line == "":
			inList = false
		case strings.HasPrefix(line, "usage: "+prog+" ") && strings.Contains(line, " | "):
			for _, alt := range strings.Split(strings.TrimPrefix(line, "usage: "+prog+" "), " | ") {
				subs = append(subs, strings.Fields(alt)[0])
			}
		}
	}
	word := regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	return slices.DeleteFunc(subs, func(s string) bool { return !word.MatchString(s) })
}

func TestListedCommands(t *testing.T) {
	assert.Equal(t, []string{"prove", "status"}, listedCommands("cuzk", "usage: cuzk <command>\n\ncommands:\n  prove    proves\n           more\n  status   the status\n\nDaemon commands take -addr\n"))
	assert.Equal(t, []string{"serve", "version", "keys"}, listedCommands("cuzk-daemon", "usage: cuzk-daemon serve [flags] | version [-json] | keys ls|rm\n"))
	assert.Empty(t, listedCommands("x", "Usage of x:\n  -n int\n"))
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	require.NoError(t, err)
	return filepath.Dir(strings.TrimSpace(string(out)))
}
