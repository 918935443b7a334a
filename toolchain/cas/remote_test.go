package cas

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memServer is a Bazel HTTP cache in memory (GET, PUT, HEAD on /ac/ and
// /cas/) whose answers a test can bend with fault.
type memServer struct {
	mu      sync.Mutex
	objects map[string][]byte
	methods []string // "METHOD /path" of every request
	auth    []string // Authorization header of every request
	fault   func(w http.ResponseWriter, r *http.Request) bool
}

func newMemServer(t *testing.T) (*memServer, *httptest.Server) {
	m := &memServer{objects: map[string][]byte{}}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return m, srv
}

func (m *memServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.methods = append(m.methods, r.Method+" "+r.URL.Path)
	m.auth = append(m.auth, r.Header.Get("Authorization"))
	fault := m.fault
	m.mu.Unlock()
	if fault != nil && fault(w, r) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch r.Method {
	case http.MethodPut:
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		m.objects[r.URL.Path] = b
		w.WriteHeader(http.StatusCreated)
	case http.MethodGet, http.MethodHead:
		b, ok := m.objects[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		if r.Method == http.MethodGet {
			_, _ = w.Write(b)
		}
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (m *memServer) setFault(f func(w http.ResponseWriter, r *http.Request) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fault = f
}

func (m *memServer) object(path string) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.objects[path]
}

func (m *memServer) setObject(path string, b []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if b == nil {
		delete(m.objects, path)
		return
	}
	m.objects[path] = b
}

func (m *memServer) requests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.methods...)
}

func newRemote(t *testing.T, url string, opts ...RemoteOption) *Remote {
	t.Helper()
	r, err := NewRemote(url, opts...)
	require.NoError(t, err)
	return r
}

func TestRemoteRoundTripUsesTheBazelLayout(t *testing.T) {
	m, srv := newMemServer(t)
	r := newRemote(t, srv.URL+"/cache/")
	id := randomAction(t)
	_, _, err := r.Get(ctx, id)
	require.ErrorIs(t, err, ErrNotFound)
	assert.NotErrorIs(t, err, ErrCorrupt, "an absent entry is a plain miss")

	outs := map[string][]byte{"fatbin": []byte("device code"), "log": []byte("ok")}
	_, err = r.Put(ctx, id, outs, []string{"input a"})
	require.NoError(t, err)
	e, data, err := r.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, outs, data)
	assert.Equal(t, []string{"input a"}, e.Inputs)
	assert.Equal(t, id, e.Action)
	assert.NotNil(t, m.object("/cache/cas/"+SumOutput([]byte("device code")).String()))
	assert.NotNil(t, m.object("/cache/ac/"+id.String()))
	reqs := m.requests()
	require.Len(t, reqs, 1+3+3, "miss GET, PUT two blobs then the entry, GET entry and two blobs")
	assert.Equal(t, "PUT /cache/ac/"+id.String(), reqs[3], "the entry goes after its blobs")
}

func TestRemoteDamageIsAReportedMiss(t *testing.T) {
	payload := []byte(strings.Repeat("fatbin bytes ", 1000))
	blobPath := "/cas/" + SumOutput(payload).String()
	cases := map[string]func(m *memServer, id ActionID){
		"wrong digest": func(m *memServer, id ActionID) {
			b := append([]byte(nil), payload...)
			b[len(b)/2] ^= 1
			m.setObject(blobPath, b)
		},
		"truncated blob": func(m *memServer, id ActionID) { m.setObject(blobPath, payload[:len(payload)/2]) },
		"longer blob":    func(m *memServer, id ActionID) { m.setObject(blobPath, append(append([]byte(nil), payload...), 'x')) },
		"entry names a missing blob": func(m *memServer, id ActionID) {
			m.setObject(blobPath, nil)
		},
		"entry unparsable": func(m *memServer, id ActionID) { m.setObject("/ac/"+id.String(), []byte("{not json")) },
		"entry of another action": func(m *memServer, id ActionID) {
			b := strings.Replace(string(m.object("/ac/"+id.String())), id.String(), strings.Repeat("ab", 32), 1)
			m.setObject("/ac/"+id.String(), []byte(b))
		},
		"Content-Length longer than the body": func(m *memServer, id ActionID) {
			m.setFault(func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path != blobPath {
					return false
				}
				w.Header().Set("Content-Length", strconv.Itoa(len(payload)))
				_, _ = w.Write(payload[:len(payload)/3])
				return true // the server closes the connection short of the promise
			})
		},
		"Content-Length shorter than the body": func(m *memServer, id ActionID) {
			m.setFault(func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path != blobPath {
					return false
				}
				w.Header().Set("Content-Length", strconv.Itoa(len(payload)-7))
				_, _ = w.Write(payload)
				return true
			})
		},
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			m, srv := newMemServer(t)
			r := newRemote(t, srv.URL)
			id := randomAction(t)
			_, err := r.Put(ctx, id, map[string][]byte{"fatbin": payload}, nil)
			require.NoError(t, err)
			damage(m, id)
			_, data, err := r.Get(ctx, id)
			require.ErrorIs(t, err, ErrNotFound)
			require.ErrorIs(t, err, ErrCorrupt, "damage is reported, not a plain miss")
			assert.NotErrorIs(t, err, ErrUnavailable)
			assert.Nil(t, data, "damaged bytes are never returned")
			assert.Contains(t, err.Error(), id.Short())
		})
	}
}

func TestRemoteUnavailable(t *testing.T) {
	const pause = 150 * time.Millisecond
	payload := []byte(strings.Repeat("x", 100000))
	cases := map[string]func(w http.ResponseWriter, r *http.Request) bool{
		"500": func(w http.ResponseWriter, r *http.Request) bool {
			http.Error(w, "boom", http.StatusInternalServerError)
			return true
		},
		"503": func(w http.ResponseWriter, r *http.Request) bool {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return true
		},
		"401": func(w http.ResponseWriter, r *http.Request) bool {
			http.Error(w, "who", http.StatusUnauthorized)
			return true
		},
		"slow headers": func(w http.ResponseWriter, r *http.Request) bool {
			time.Sleep(4 * pause)
			return false
		},
		"body stalls halfway": func(w http.ResponseWriter, r *http.Request) bool {
			if !strings.HasPrefix(r.URL.Path, "/cas/") {
				return false
			}
			w.Header().Set("Content-Length", strconv.Itoa(len(payload)))
			_, _ = w.Write(payload[:len(payload)/2])
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(20 * pause):
			}
			return true
		},
	}
	for name, fault := range cases {
		t.Run(name, func(t *testing.T) {
			m, srv := newMemServer(t)
			r := newRemote(t, srv.URL, WithRemoteTimeout(pause))
			id := randomAction(t)
			_, err := r.Put(ctx, id, map[string][]byte{"fatbin": payload}, nil)
			require.NoError(t, err)
			m.setFault(fault)
			start := time.Now()
			_, data, err := r.Get(ctx, id)
			require.ErrorIs(t, err, ErrUnavailable)
			assert.NotErrorIs(t, err, ErrNotFound, "a server that cannot answer says nothing about the action")
			assert.Nil(t, data)
			assert.Less(t, time.Since(start), 10*pause, "a stalled server costs about one timeout")
		})
	}
	t.Run("slow but steady body is read", func(t *testing.T) {
		m, srv := newMemServer(t)
		r := newRemote(t, srv.URL, WithRemoteTimeout(pause))
		id := randomAction(t)
		_, err := r.Put(ctx, id, map[string][]byte{"fatbin": payload}, nil)
		require.NoError(t, err)
		m.setFault(func(w http.ResponseWriter, req *http.Request) bool {
			if !strings.HasPrefix(req.URL.Path, "/cas/") {
				return false
			}
			w.Header().Set("Content-Length", strconv.Itoa(len(payload)))
			for i := 0; i < 5; i++ { // five pieces, 0.4 pauses apart: longer than one pause in all
				_, _ = w.Write(payload[i*len(payload)/5 : (i+1)*len(payload)/5])
				w.(http.Flusher).Flush()
				time.Sleep(2 * pause / 5)
			}
			return true
		})
		_, data, err := r.Get(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, payload, data["fatbin"])
	})
	t.Run("server down", func(t *testing.T) {
		_, srv := newMemServer(t)
		r := newRemote(t, srv.URL, WithRemoteTimeout(pause))
		srv.Close()
		_, _, err := r.Get(ctx, randomAction(t))
		require.ErrorIs(t, err, ErrUnavailable)
		_, err = r.Put(ctx, randomAction(t), map[string][]byte{"f": []byte("x")}, nil)
		require.ErrorIs(t, err, ErrUnavailable)
	})
}

func TestRemoteRefusedWrites(t *testing.T) {
	for _, code := range []int{http.StatusForbidden, http.StatusMethodNotAllowed, http.StatusInsufficientStorage, http.StatusBadGateway} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			m, srv := newMemServer(t)
			m.setFault(func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodPut {
					return false
				}
				w.WriteHeader(code)
				return true
			})
			r := newRemote(t, srv.URL)
			id := randomAction(t)
			_, err := r.Put(ctx, id, map[string][]byte{"f": []byte("x")}, nil)
			require.ErrorIs(t, err, ErrUnavailable)
			assert.Contains(t, err.Error(), strconv.Itoa(code))
			assert.Nil(t, m.object("/ac/"+id.String()), "no entry without its blobs")
		})
	}
}

func TestReadOnlyNeverSends(t *testing.T) {
	m, srv := newMemServer(t)
	rw := newRemote(t, srv.URL)
	id := randomAction(t)
	_, err := rw.Put(ctx, id, map[string][]byte{"f": []byte("x")}, nil)
	require.NoError(t, err)
	ro := ReadOnly(rw)
	before := len(m.requests())
	_, err = ro.Put(ctx, randomAction(t), map[string][]byte{"f": []byte("y")}, nil)
	require.ErrorIs(t, err, ErrReadOnly)
	assert.Len(t, m.requests(), before, "a read-only Put sends nothing")
	_, data, err := ro.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, []byte("x"), data["f"])
	assert.Contains(t, fmt.Sprint(ro), srv.URL)
	assert.Contains(t, fmt.Sprint(ro), "read-only")

	local := ReadOnly(newStore(t))
	_, err = local.Put(ctx, id, map[string][]byte{"f": []byte("x")}, nil)
	require.ErrorIs(t, err, ErrReadOnly)
}

func TestCredentialsAreSentAndNeverPrinted(t *testing.T) {
	const token = "s3cr3t-t0ken-value"
	m, srv := newMemServer(t)
	r := newRemote(t, srv.URL, WithCredentials(Credentials{Token: token}), WithRemoteTimeout(100*time.Millisecond))
	id := randomAction(t)
	_, err := r.Put(ctx, id, map[string][]byte{"f": []byte("x")}, nil)
	require.NoError(t, err)
	_, _, err = r.Get(ctx, id)
	require.NoError(t, err)
	m.mu.Lock()
	for _, a := range m.auth {
		assert.Equal(t, "Bearer "+token, a)
	}
	m.mu.Unlock()

	var texts []string
	for _, code := range []int{401, 403, 500} {
		m.setFault(func(w http.ResponseWriter, req *http.Request) bool {
			http.Error(w, "refused "+req.Header.Get("Authorization"), code) // a server that echoes the header
			return true
		})
		_, _, err := r.Get(ctx, id)
		require.Error(t, err)
		texts = append(texts, err.Error())
		_, err = r.Put(ctx, id, map[string][]byte{"f": []byte("x")}, nil)
		require.Error(t, err)
		texts = append(texts, err.Error())
	}
	srv.Close()
	_, _, err = r.Get(ctx, id)
	require.Error(t, err)
	texts = append(texts, err.Error(), r.String(), fmt.Sprint(ReadOnly(r)))
	c := Credentials{Token: token, Login: "me", Password: token}
	texts = append(texts, fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), fmt.Sprintf("%v", []Credentials{c}))
	for _, s := range texts {
		assert.NotContains(t, s, token)
	}

	b := Credentials{Login: "ci", Password: "pw-from-netrc"}
	m2, srv2 := newMemServer(t)
	r2 := newRemote(t, srv2.URL, WithCredentials(b))
	_, _, _ = r2.Get(ctx, id)
	m2.mu.Lock()
	defer m2.mu.Unlock()
	req, _ := http.NewRequest(http.MethodGet, "http://x", nil)
	req.SetBasicAuth("ci", "pw-from-netrc")
	assert.Equal(t, []string{req.Header.Get("Authorization")}, m2.auth)
}

func TestNewRemoteRejectsBadURLs(t *testing.T) {
	for _, bad := range []string{"", "cache.example", "ftp://cache.example/x", "http://", "http://h/x?y=1"} {
		_, err := NewRemote(bad)
		assert.Error(t, err, bad)
	}
	_, err := NewRemote("https://me:hunter2@cache.example/c")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "hunter2")
	_, err = NewRemote("http://h/x", WithRemoteTimeout(0))
	assert.Error(t, err)
}

func TestNetrcLookup(t *testing.T) {
	const netrc = `# comment
machine other.example login a password b
machine cache.example
  login ci
  password p1
macdef init
  machine cache.example login evil password evil

default login anon password p0
`
	cases := []struct {
		host, login, password string
		ok                    bool
	}{
		{"cache.example", "ci", "p1", true},
		{"other.example", "a", "b", true},
		{"nowhere.example", "anon", "p0", true},
	}
	for _, tc := range cases {
		l, p, ok := NetrcLookup(netrc, tc.host)
		assert.Equal(t, tc.ok, ok, tc.host)
		assert.Equal(t, tc.login, l, tc.host)
		assert.Equal(t, tc.password, p, tc.host)
	}
	_, _, ok := NetrcLookup("machine a login b password c\n", "z")
	assert.False(t, ok)
	_, _, ok = NetrcLookup("", "z")
	assert.False(t, ok)
}

func TestRemoteCancelledContextIsNotUnavailability(t *testing.T) {
	_, srv := newMemServer(t)
	r := newRemote(t, srv.URL)
	cctx, cancel := contextWithCancel()
	cancel()
	_, _, err := r.Get(cctx, randomAction(t))
	require.Error(t, err)
	assert.True(t, errors.Is(err, errCanceled), "got %v", err)
	assert.NotErrorIs(t, err, ErrUnavailable)
}

var errCanceled = context.Canceled

func contextWithCancel() (context.Context, context.CancelFunc) { return context.WithCancel(ctx) }
