package toolchain_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/toolchain"
	"github.com/cuzk-dev/cuzk/toolchain/cas"
)

func TestRemoteCacheSettings(t *testing.T) {
	p, err := toolchain.Load(nil)
	require.NoError(t, err)
	assert.Equal(t, toolchain.RemoteCache{}, p.Remote, "no remote cache by default")

	p, err = toolchain.Load([]string{"CUZK_REMOTE_CACHE=http://cache.example:8080/cuzk", "CUZK_REMOTE_CACHE_UPLOAD=1"})
	require.NoError(t, err)
	assert.Equal(t, toolchain.RemoteCache{URL: "http://cache.example:8080/cuzk", Upload: true}, p.Remote)

	p, err = toolchain.Load([]string{"CUZK_REMOTE_CACHE=", "CUZK_REMOTE_CACHE_UPLOAD="})
	require.NoError(t, err, "empty variables (CI without the secrets) mean no remote")
	assert.Equal(t, toolchain.RemoteCache{}, p.Remote)
	p, err = toolchain.Load([]string{"CUZK_REMOTE_CACHE=http://h/c", "CUZK_REMOTE_CACHE_UPLOAD=0"})
	require.NoError(t, err)
	assert.False(t, p.Remote.Upload)

	dir := t.TempDir()
	file := filepath.Join(dir, "pins.yaml")
	require.NoError(t, os.WriteFile(file, []byte("remote_cache: https://cache.example/c\n"), 0o644))
	p, err = toolchain.Load([]string{"CUZK_PINS=" + file})
	require.NoError(t, err)
	assert.Equal(t, toolchain.RemoteCache{URL: "https://cache.example/c"}, p.Remote)

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("remote_cache_uplaod: true\n"), 0o644))
	_, err = toolchain.Load([]string{"CUZK_PINS=" + bad})
	assert.ErrorContains(t, err, `unknown key "remote_cache_uplaod"`)

	for env, want := range map[string]string{
		"CUZK_REMOTE_CACHE_UPLOAD=1":                    "remote_cache_upload: set without remote_cache",
		"CUZK_REMOTE_CACHE=cache.example":               "is not an http:// or https:// URL",
		"CUZK_REMOTE_CACHE=https://u:hunter2@h.example": "carries credentials",
		"CUZK_REMOTE_CACHE_TOKN=x":                      "unknown variable CUZK_REMOTE_CACHE_TOKN",
	} {
		_, err := toolchain.Load([]string{env})
		require.Error(t, err, env)
		assert.Contains(t, err.Error(), want, env)
		assert.NotContains(t, err.Error(), "hunter2")
	}
	_, err = toolchain.Load([]string{"CUZK_REMOTE_CACHE_TOKEN=x"})
	assert.NoError(t, err, "the token is an operational variable, not a pin")
}

// authServer records the Authorization header of every request and
// answers 404.
type authServer struct {
	mu   sync.Mutex
	seen []string
}

func (a *authServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.seen = append(a.seen, r.Method+" "+r.Header.Get("Authorization"))
	a.mu.Unlock()
	http.NotFound(w, r)
}

func TestOpenRemote(t *testing.T) {
	ctx := context.Background()
	p, err := toolchain.Load(nil)
	require.NoError(t, err)
	c, err := toolchain.OpenRemote(p, nil)
	require.NoError(t, err)
	assert.Nil(t, c, "none configured")

	a := &authServer{}
	srv := httptest.NewServer(a)
	defer srv.Close()
	home := t.TempDir()
	host := strings.Split(strings.TrimPrefix(srv.URL, "http://"), ":")[0]
	require.NoError(t, os.WriteFile(filepath.Join(home, ".netrc"), []byte("machine "+host+" login ci password from-netrc\n"), 0o600))

	p.Remote = toolchain.RemoteCache{URL: srv.URL}
	c, err = toolchain.OpenRemote(p, []string{"HOME=" + home})
	require.NoError(t, err)
	_, err = c.Put(ctx, cas.ActionID{1}, map[string][]byte{"f": []byte("x")}, nil)
	require.ErrorIs(t, err, cas.ErrReadOnly, "without upload the remote is read-only")
	_, _, err = c.Get(ctx, cas.ActionID{1})
	require.ErrorIs(t, err, cas.ErrNotFound)

	const token = "tok-3f9a1c"
	p.Remote.Upload = true
	c, err = toolchain.OpenRemote(p, []string{"HOME=" + home, toolchain.EnvRemoteToken + "=" + token})
	require.NoError(t, err)
	_, err = c.Put(ctx, cas.ActionID{2}, map[string][]byte{"f": []byte("x")}, nil)
	require.ErrorIs(t, err, cas.ErrUnavailable, "the test server refuses writes")
	assert.NotContains(t, err.Error(), token)
	assert.NotContains(t, fmt.Sprint(c), token)

	a.mu.Lock()
	defer a.mu.Unlock()
	require.Len(t, a.seen, 2, "one GET (netrc) and one refused PUT (token); the read-only Put sent nothing")
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.SetBasicAuth("ci", "from-netrc")
	assert.Equal(t, "GET "+req.Header.Get("Authorization"), a.seen[0])
	assert.Equal(t, "PUT Bearer "+token, a.seen[1], "the token wins over netrc")
}
