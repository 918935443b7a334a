package cas

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// DefaultRemoteTimeout bounds each phase of a remote request: connecting,
// waiting for the response headers, and the longest pause within a body.
const DefaultRemoteTimeout = 10 * time.Second

// maxEntryBytes bounds an /ac/ body: an entry lists a few outputs and the
// key's input lines.
const maxEntryBytes = 4 << 20

// Credentials authenticate requests to a remote cache: a bearer token, or
// else a login and password (HTTP basic, as a netrc entry gives). Printing
// a Credentials with any fmt verb shows no secret.
type Credentials struct {
	Token    string
	Login    string
	Password string
}

// String redacts the secrets.
func (c Credentials) String() string {
	switch {
	case c.Token != "":
		return "bearer token (redacted)"
	case c.Login != "" || c.Password != "":
		return "login and password (redacted)"
	}
	return "none"
}

// GoString redacts the secrets for %#v.
func (c Credentials) GoString() string { return "cas.Credentials{" + c.String() + "}" }

// Remote is a cache server speaking the Bazel HTTP remote cache protocol:
// GET, PUT and HEAD on <base>/ac/<sha256-hex> for action entries and
// <base>/cas/<sha256-hex> for blobs, the layout bazel-remote, BuildBuddy
// and an nginx WebDAV location serve. The /ac/ value is this package's
// versioned Entry JSON, not a Bazel ActionResult.
//
// Nothing it downloads is trusted: an entry must name its action and this
// entry version, and every blob must have the entry's size and hash. A
// wrong digest, a truncated body or an entry naming a blob the server lacks
// is ErrNotFound matching ErrCorrupt. A server that does not answer well
// (connection refused, 5xx, 401/403, a stall longer than the timeout) gives
// ErrUnavailable. Error texts carry the request path and status, never the
// credentials.
//
// A Remote is safe for concurrent use by goroutines. Writers on any number
// of machines may store the same action at once: each PUT replaces a whole
// object, blobs are named by their hash, and an entry is stored after its
// blobs.
type Remote struct {
	base    *url.URL
	client  *http.Client
	cred    Credentials
	timeout time.Duration
}

// RemoteOption configures a Remote; bad values are rejected by NewRemote.
type RemoteOption func(*Remote) error

// WithCredentials sets how requests authenticate (default: not at all).
func WithCredentials(c Credentials) RemoteOption {
	return func(r *Remote) error { r.cred = c; return nil }
}

// WithRemoteTimeout sets the bound on connecting, on waiting for response
// headers and on any pause within a body (default DefaultRemoteTimeout).
func WithRemoteTimeout(d time.Duration) RemoteOption {
	return func(r *Remote) error {
		if d <= 0 {
			return fmt.Errorf("cas: remote timeout %s <= 0", d)
		}
		r.timeout = d
		return nil
	}
}

// NewRemote returns the remote cache at base (http or https). Credentials
// inside the URL are refused, so that the URL can be printed.
func NewRemote(base string, opts ...RemoteOption) (*Remote, error) {
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil {
		return nil, fmt.Errorf("cas: remote cache URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("cas: remote cache URL %q: want http://host/path or https://host/path", u.Redacted())
	}
	if u.User != nil {
		return nil, fmt.Errorf("cas: remote cache URL %q carries credentials: use a token or a netrc file", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("cas: remote cache URL %q: no query or fragment allowed", u.Redacted())
	}
	r := &Remote{base: u, timeout: DefaultRemoteTimeout}
	for _, o := range opts {
		if err := o(r); err != nil {
			return nil, err
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: r.timeout, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = r.timeout
	tr.ResponseHeaderTimeout = r.timeout
	tr.MaxIdleConnsPerHost = 16
	r.client = &http.Client{Transport: tr}
	return r, nil
}

// String returns the base URL.
func (r *Remote) String() string { return r.base.String() }

// Entry fetches and checks the entry for id, without its blobs.
func (r *Remote) Entry(ctx context.Context, id ActionID) (Entry, error) {
	raw, err := r.get(ctx, "ac", id.String(), maxEntryBytes, false)
	if err != nil {
		return Entry{}, fmt.Errorf("remote entry %s: %w", id.Short(), err)
	}
	var e Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return Entry{}, fmt.Errorf("remote entry %s: %w: %w: parse: %v", id.Short(), ErrNotFound, ErrCorrupt, err)
	}
	if e.Version != entryVersion || e.Action != id {
		return Entry{}, fmt.Errorf("remote entry %s: %w: %w: names version %d action %s",
			id.Short(), ErrNotFound, ErrCorrupt, e.Version, e.Action.Short())
	}
	return e, nil
}

// Get fetches the entry for id and every blob it names, each checked
// against the entry's size and hash before it is returned.
func (r *Remote) Get(ctx context.Context, id ActionID) (Entry, map[string][]byte, error) {
	e, err := r.Entry(ctx, id)
	if err != nil {
		return Entry{}, nil, err
	}
	data := make(map[string][]byte, len(e.Outputs))
	for _, o := range e.Outputs {
		if o.Size < 0 {
			return Entry{}, nil, fmt.Errorf("remote get %s: %w: %w: output %s has size %d", id.Short(), ErrNotFound, ErrCorrupt, o.Name, o.Size)
		}
		b, err := r.get(ctx, "cas", o.ID.String(), o.Size, true)
		if errors.Is(err, ErrNotFound) && !errors.Is(err, ErrCorrupt) {
			err = fmt.Errorf("%w: %w: the entry names it, the server lacks it", ErrNotFound, ErrCorrupt)
		}
		if err != nil {
			return Entry{}, nil, fmt.Errorf("remote get %s: output %s blob %s: %w", id.Short(), o.Name, o.ID.String()[:12], err)
		}
		if SumOutput(b) != o.ID {
			return Entry{}, nil, fmt.Errorf("remote get %s: output %s: %w: %w: blob %s has other bytes",
				id.Short(), o.Name, ErrNotFound, ErrCorrupt, o.ID.String()[:12])
		}
		data[o.Name] = b
	}
	return e, data, nil
}

// Put uploads outputs as the result of action id: every blob, then the
// entry, so a reader that finds the entry finds its blobs. Blobs are sent
// even when the server has them, which replaces a damaged copy.
func (r *Remote) Put(ctx context.Context, id ActionID, outputs map[string][]byte, inputs []string) (Entry, error) {
	e := Entry{Version: entryVersion, Action: id, Inputs: inputs, Created: time.Now().UTC()}
	names := make([]string, 0, len(outputs))
	for name := range outputs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		b := outputs[name]
		oid := SumOutput(b)
		if err := r.put(ctx, "cas", oid.String(), b); err != nil {
			return Entry{}, fmt.Errorf("remote put %s output %s: %w", id.Short(), name, err)
		}
		e.Outputs = append(e.Outputs, Output{Name: name, ID: oid, Size: int64(len(b))})
	}
	raw, err := json.MarshalIndent(e, "", " ")
	if err != nil {
		return Entry{}, fmt.Errorf("remote put %s: %w", id.Short(), err)
	}
	if err := r.put(ctx, "ac", id.String(), raw); err != nil {
		return Entry{}, fmt.Errorf("remote put %s entry: %w", id.Short(), err)
	}
	return e, nil
}

func (r *Remote) objectURL(kind, hexID string) string {
	u := *r.base
	u.Path = strings.TrimRight(u.Path, "/") + "/" + kind + "/" + hexID
	return u.String()
}

func (r *Remote) authorize(req *http.Request) {
	switch {
	case r.cred.Token != "":
		req.Header.Set("Authorization", "Bearer "+r.cred.Token)
	case r.cred.Login != "" || r.cred.Password != "":
		req.SetBasicAuth(r.cred.Login, r.cred.Password)
	}
}

// get fetches one object. A 404 is ErrNotFound. With exact set the body
// must be size bytes long; otherwise at most size.
func (r *Remote) get(ctx context.Context, kind, hexID string, size int64, exact bool) ([]byte, error) {
	what := "GET /" + kind + "/" + hexID[:12]
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.objectURL(kind, hexID), nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	r.authorize(req)
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, r.transportError(ctx, what, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("%s: %w", what, ErrNotFound)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%s: %w: %s", what, ErrUnavailable, resp.Status)
	}
	if resp.ContentLength > size || exact && resp.ContentLength >= 0 && resp.ContentLength != size {
		return nil, fmt.Errorf("%s: %w: %w: Content-Length %d, want %d", what, ErrNotFound, ErrCorrupt, resp.ContentLength, size)
	}
	b, err := readStalling(resp.Body, size+1, r.timeout, cancel)
	if errors.Is(err, errStalled) {
		return nil, fmt.Errorf("%s: %w: no bytes for %s", what, ErrUnavailable, r.timeout)
	}
	if err != nil {
		// A body cut short (the server promised more, or the connection
		// dropped mid-object) is damage to this object, reported as a miss.
		return nil, fmt.Errorf("%s: %w: %w: body cut short after %d bytes: %v", what, ErrNotFound, ErrCorrupt, len(b), err)
	}
	if int64(len(b)) > size || exact && int64(len(b)) != size {
		return nil, fmt.Errorf("%s: %w: %w: %d bytes, want %d", what, ErrNotFound, ErrCorrupt, len(b), size)
	}
	return b, nil
}

// put stores one object; any status but 200, 201 or 204 is a refusal.
func (r *Remote) put(ctx context.Context, kind, hexID string, b []byte) error {
	what := "PUT /" + kind + "/" + hexID[:12]
	// A whole upload gets the timeout four times over: the bound on a
	// pause does not apply to a request body being sent.
	ctx, cancel := context.WithTimeout(ctx, 4*r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, r.objectURL(kind, hexID), bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	req.ContentLength = int64(len(b))
	req.Header.Set("Content-Type", "application/octet-stream")
	r.authorize(req)
	resp, err := r.client.Do(req)
	if err != nil {
		return r.transportError(ctx, what, err)
	}
	defer resp.Body.Close()
	// Draining a little of the body lets the connection be reused; what it
	// holds is not needed.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	switch resp.StatusCode {
	case http.StatusOK, http.StatusCreated, http.StatusNoContent:
		return nil
	}
	return fmt.Errorf("%s: %w: refused: %s", what, ErrUnavailable, resp.Status)
}

// transportError turns a failed round trip into ErrUnavailable, unless the
// caller's context ended (that error is returned as it is).
func (r *Remote) transportError(ctx context.Context, what string, err error) error {
	if cerr := context.Cause(ctx); cerr != nil && !errors.Is(cerr, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", what, cerr)
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err // the URL is the base plus the path already named
	}
	return fmt.Errorf("%s: %w: %v", what, ErrUnavailable, err)
}
