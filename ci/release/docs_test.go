package release

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/ci/sign"
	"github.com/cuzk-dev/cuzk/ci/sign/signtest"
)

// docsMessages reads the table of docs/release.md whose second column is
// "`dist:verify` says": case → message, without the code span's backticks.
func docsMessages(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "docs", "release.md"))
	require.NoError(t, err)
	defer f.Close() // read only
	out := map[string]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "| what is wrong | `dist:verify` says |"):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "| "):
			cells := strings.Split(strings.Trim(line, "| "), " | ")
			require.Len(t, cells, 2, line)
			msg := strings.TrimSpace(cells[1])
			if m, ok := strings.CutPrefix(msg, "`` "); ok { // a message holding backticks
				msg = strings.TrimSuffix(m, " ``")
			} else if m, ok := strings.CutPrefix(msg, "``"); ok {
				msg = strings.TrimSuffix(m, "``")
			} else {
				msg = strings.Trim(msg, "`")
			}
			out[cells[0]] = msg
		default:
			in = false
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// matches reports whether msg is the documented message doc, "…" standing
// for any text.
func matches(doc, msg string) bool {
	parts := strings.Split(doc, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".+") + "$").MatchString(msg)
}

// TestDocsVerifyMessages makes every case of docs/release.md's table of
// dist:verify's messages, runs the check as dist:verify does (the policy
// from the flags, VerifyRelease, mage's "Error: " before the error) on a
// directory named dist, and compares the message with the table's.
func TestDocsVerifyMessages(t *testing.T) {
	ctx := context.Background()
	docs := docsMessages(t)
	keyed := goodRelease(t)
	s, _, pub := keySigner(t)
	_, err := SignDist(ctx, keyed, s, "")
	require.NoError(t, err)
	_, _, otherPub := keySigner(t)
	vs, err := signtest.New()
	require.NoError(t, err)
	ks, err := vs.Signer(testWorkflow, signtest.Issuer)
	require.NoError(t, err)
	keyless := filepath.Join(t.TempDir(), "dist")
	copyTree(t, goodRelease(t), keyless)
	_, err = SignDist(ctx, keyless, ks, DefaultImageRepository)
	require.NoError(t, err)

	byKey := func(key string) func() (*sign.Verifier, bool, error) {
		return func() (*sign.Verifier, bool, error) {
			sv, err := SignaturePolicy{Key: key}.Verifier()
			return sv, false, err
		}
	}
	cases := map[string]struct {
		src    string
		damage func(dir string)
		policy func() (*sign.Verifier, bool, error)
	}{
		"no `-key`, `-identity` or `-unsigned`": {keyed, nil, func() (*sign.Verifier, bool, error) {
			sv, err := SignaturePolicy{}.Verifier()
			return sv, false, err
		}},
		"`SHA256SUMS.sigstore.json` missing": {keyed, func(dir string) { remove(t, filepath.Join(dir, SumsFile+sign.BundleSuffix)) }, byKey(pub)},
		"a file edited and `SHA256SUMS` regenerated": {keyed, func(dir string) {
			rewrite(t, only(t, dir, "*"+SBOMSuffix), func(b []byte) []byte { return append(b, '\n') })
			resum(t, dir)
		}, byKey(pub)},
		"signed with another key": {keyed, nil, byKey(otherPub)},
		"signed by another identity": {keyless, nil, func() (*sign.Verifier, bool, error) {
			sv, err := vs.Verifier("https://github.com/evil/cuzk/.github/workflows/release.yml@refs/tags/v0.1.0", signtest.Issuer)
			return sv, false, err
		}},
		"a file edited, `SHA256SUMS` kept": {keyed, func(dir string) {
			rewrite(t, only(t, dir, "*"+SBOMSuffix), func(b []byte) []byte { return append(b, '\n') })
		}, byKey(pub)},
		"a file `SHA256SUMS` does not list": {keyed, func(dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "stray.txt"), []byte("x"), 0o644))
		}, byKey(pub)},
		"a file's own bundle missing": {keyed, func(dir string) { remove(t, only(t, dir, "*.tar.gz"+sign.BundleSuffix)) }, byKey(pub)},
		"the image signature missing": {keyed, func(dir string) { require.NoError(t, os.RemoveAll(filepath.Join(dir, ImageSignatureDir))) }, byKey(pub)},
	}
	for name := range docs {
		_, ok := cases[name]
		assert.True(t, ok, "docs/release.md documents %q, which this test does not make", name)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			doc, ok := docs[name]
			require.True(t, ok, "docs/release.md's table lacks the case %q", name)
			parent := t.TempDir()
			copyTree(t, tc.src, filepath.Join(parent, "dist"))
			if tc.damage != nil {
				tc.damage(filepath.Join(parent, "dist"))
			}
			t.Chdir(parent) // the message names the directory as typed: dist
			sv, skip, err := tc.policy()
			if err == nil {
				_, err = VerifyRelease("dist", sv, skip)
			}
			require.Error(t, err)
			msg := fmt.Sprintf("Error: %+v", err)
			assert.True(t, matches(doc, msg), "docs/release.md says\n  %s\ndist:verify says\n  %s", doc, msg)
		})
	}
}

func TestMatches(t *testing.T) {
	assert.True(t, matches("a … b", "a x y b"))
	assert.False(t, matches("a … b", "a  b"), "… stands for some text")
	assert.False(t, matches("a (b)", "a b"), "the rest is literal")
}
