package nginx

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestServerStoresPutsAndLogsThem(t *testing.T) {
	if _, err := Binary(); errors.Is(err, ErrNotInstalled) {
		t.Skip("nginx not installed (apt-get install nginx; .ci/run does): WebDAV server tests need it")
	}
	s, err := Start(context.Background(), t.TempDir())
	require.NoError(t, err)
	defer s.Stop()

	body := []byte("blob bytes")
	req, err := http.NewRequest(http.MethodPut, s.URL+"/cas/ab/cd", bytes.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusCreated, resp.StatusCode, "create_full_put_path makes the directories")
	got, err := os.ReadFile(s.Object("cas", "ab/cd"))
	require.NoError(t, err)
	assert.Equal(t, body, got)

	resp, err = http.Get(s.URL + "/cas/ab/cd")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, body, b)
	resp, err = http.Get(s.URL + "/ac/missing")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)

	reqs, err := s.WaitRequests(3, 5*time.Second)
	require.NoError(t, err)
	require.Len(t, reqs, 3)
	assert.Equal(t, []Request{
		{Method: "PUT", Path: "/cache/cas/ab/cd", Status: 201},
		{Method: "GET", Path: "/cache/cas/ab/cd", Status: 200, Bytes: int64(len(body))},
		{Method: "GET", Path: "/cache/ac/missing", Status: 404, Bytes: reqs[2].Bytes},
	}, reqs)

	require.NoError(t, s.Stop())
	_, err = http.Get(s.URL + "/cas/ab/cd")
	assert.Error(t, err, "a stopped server refuses connections")
	require.NoError(t, s.Stop(), "a second Stop is harmless")
}
