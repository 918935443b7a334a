package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/magefile/mage/parse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readme is the file whose target list and mentions the tests check.
const readme = "../README.md"

// listing returns what `go run mage.go -l` lists, by mage's own parser:
// target name (lower case; "*" marks the default) → synopsis, and the
// aliases → the targets they name.
func listing(t *testing.T) (targets, aliases map[string]string) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	files = slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, "_test.go") })
	info, err := parse.PrimaryPackage("go", ".", files, false)
	require.NoError(t, err)
	targets = map[string]string{}
	for _, f := range info.Funcs {
		name := strings.ToLower(f.TargetName())
		if d := info.DefaultFunc; d != nil && d.Name == f.Name && d.Receiver == f.Receiver {
			name += "*"
		}
		targets[name] = f.Synopsis
	}
	aliases = map[string]string{}
	for a, f := range info.Aliases {
		aliases[strings.ToLower(a)] = strings.ToLower(f.TargetName())
	}
	require.Greater(t, len(targets), 10, "the magefiles moved?")
	return targets, aliases
}

// readmeTargets returns the README's block under "## Targets": each line's
// name → synopsis, and its "Aliases:" line's `alias` for `target` pairs.
func readmeTargets(t *testing.T) (targets, aliases map[string]string) {
	t.Helper()
	f, err := os.Open(readme)
	require.NoError(t, err)
	defer f.Close() // read only
	targets, aliases = map[string]string{}, map[string]string{}
	section, block := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			section = strings.HasPrefix(line, "## Targets")
		case !section:
		case strings.HasPrefix(line, "```"):
			block = !block
		case block && strings.TrimSpace(line) != "":
			name, synopsis, ok := strings.Cut(strings.TrimSpace(line), "  ")
			require.True(t, ok, "README target line %q: want `  name  synopsis`", line)
			targets[name] = strings.TrimSpace(synopsis)
		case strings.HasPrefix(line, "Aliases: "):
			for _, a := range regexp.MustCompile("`([a-z:]+)` for `([a-z:]+)`").FindAllStringSubmatch(line, -1) {
				aliases[a[1]] = a[2]
			}
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, targets, "README has no block of targets under \"## Targets\"")
	return targets, aliases
}

// TestReadmeListsTheTargets: the README's target block is what `go run
// mage.go -l` prints, line for line, and its aliases are mage's.
func TestReadmeListsTheTargets(t *testing.T) {
	want, wantAliases := listing(t)
	have, haveAliases := readmeTargets(t)
	for name, syn := range want {
		if got, ok := have[name]; !ok {
			t.Errorf("README: target %s missing from the block under \"## Targets\" (paste `go run mage.go -l`)", name)
		} else {
			assert.Equal(t, syn, got, "README: target %s's line differs from `go run mage.go -l`", name)
		}
	}
	for name := range have {
		_, ok := want[name]
		assert.True(t, ok, "README lists %s, which `go run mage.go -l` does not", name)
	}
	assert.Equal(t, wantAliases, haveAliases, "README's Aliases line against the magefiles' Aliases")
}

// TestDocsNameOnlyTargets: one name per target, so that `go run mage.go
// -h NAME` (which knows no aliases) answers for every name the README,
// docs/*.md and the workflows use: the magefiles declare no aliases, and
// every `mage.go <target>` and every `namespace:target` they mention is a
// target (names compared without case, as mage does).
func TestDocsNameOnlyTargets(t *testing.T) {
	targets, aliases := listing(t)
	assert.Empty(t, aliases, "an alias is a second name, and mage -h does not know it")
	known, namespaces := map[string]bool{}, map[string]bool{}
	for name := range targets {
		name = strings.TrimSuffix(name, "*")
		known[name] = true
		if ns, _, ok := strings.Cut(name, ":"); ok {
			namespaces[ns] = true
		}
	}
	docs, err := filepath.Glob("../docs/*.md")
	require.NoError(t, err)
	workflows, err := filepath.Glob("../.github/workflows/*.yml")
	require.NoError(t, err)
	run := regexp.MustCompile(`mage\.go ([A-Za-z][A-Za-z0-9:]*)`)
	namespaced := regexp.MustCompile("`([a-z]+:[a-z]+)[ `]")
	mentions := 0
	for _, file := range append(append([]string{readme}, docs...), workflows...) {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, m := range run.FindAllStringSubmatch(string(b), -1) {
			mentions++
			assert.True(t, known[strings.ToLower(m[1])], "%s mentions `mage.go %s`: no such target", file, m[1])
		}
		for _, m := range namespaced.FindAllStringSubmatch(string(b), -1) {
			if ns, _, _ := strings.Cut(m[1], ":"); namespaces[ns] || ns == "release" {
				mentions++
				assert.True(t, known[m[1]], "%s mentions `%s`: no such target", file, m[1])
			}
		}
	}
	require.Greater(t, mentions, 20, "the docs mention targets")
}
