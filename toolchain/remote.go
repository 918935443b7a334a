package toolchain

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	envmap "github.com/cuzk-dev/cuzk/internal/environ"
	"github.com/cuzk-dev/cuzk/toolchain/cas"
)

// RemoteCache says where the shared kernel cache is and whether this
// machine writes to it. It is configuration, not a pin: no key includes it.
type RemoteCache struct {
	// URL is the server's base (CUZK_REMOTE_CACHE); "" means none.
	URL string `mapstructure:"remote_cache"`
	// Upload also stores built kernels there (CUZK_REMOTE_CACHE_UPLOAD=1).
	Upload bool `mapstructure:"remote_cache_upload"`
}

func (r RemoteCache) validate() error {
	if r.URL == "" {
		if r.Upload {
			return errors.New("pin remote_cache_upload: set without remote_cache")
		}
		return nil
	}
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("pin remote_cache: %q is not an http:// or https:// URL", redact(r.URL))
	}
	if u.User != nil {
		return fmt.Errorf("pin remote_cache: %q carries credentials: use %s or ~/.netrc", redact(r.URL), EnvRemoteToken)
	}
	return nil
}

func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return "(unparsable URL)"
}

// OpenRemote returns the remote cache the pins name, read-only unless
// Remote.Upload is set, or nil when none is configured. Credentials come
// from CUZK_REMOTE_CACHE_TOKEN (a bearer token), else from the netrc file
// ($NETRC, else ~/.netrc) entry for the server's host; neither is printed.
func OpenRemote(p Pins, environ []string, opts ...cas.RemoteOption) (cas.Cache, error) {
	if p.Remote.URL == "" {
		return nil, nil
	}
	u, err := url.Parse(p.Remote.URL)
	if err != nil {
		return nil, fmt.Errorf("remote cache: %w", err)
	}
	env := envmap.Map(environ)
	cred := cas.Credentials{Token: env[EnvRemoteToken]}
	if cred.Token == "" {
		if cred, err = netrcCredentials(env, u.Hostname()); err != nil {
			return nil, err
		}
	}
	r, err := cas.NewRemote(p.Remote.URL, append(opts, cas.WithCredentials(cred))...)
	if err != nil {
		return nil, fmt.Errorf("remote cache: %w", err)
	}
	if !p.Remote.Upload {
		return cas.ReadOnly(r), nil
	}
	return r, nil
}

// netrcCredentials reads the login and password for host from $NETRC or
// ~/.netrc; a missing file means no credentials.
func netrcCredentials(env map[string]string, host string) (cas.Credentials, error) {
	path := env["NETRC"]
	if path == "" {
		home := env["HOME"]
		if home == "" {
			return cas.Credentials{}, nil
		}
		path = filepath.Join(home, ".netrc")
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return cas.Credentials{}, nil
	}
	if err != nil {
		return cas.Credentials{}, fmt.Errorf("remote cache: read netrc: %w", err)
	}
	login, password, _ := cas.NetrcLookup(string(b), host)
	return cas.Credentials{Login: login, Password: password}, nil
}
