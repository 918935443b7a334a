package nginx

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrNotInstalled reports that no nginx binary was found.
var ErrNotInstalled = errors.New("nginx: not installed (Debian package nginx)")

// Location is the URL path the server accepts objects under.
const Location = "/cache"

// Binary returns the nginx binary: on PATH, else Debian's /usr/sbin/nginx
// (which a non-root PATH often lacks).
func Binary() (string, error) {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	if st, err := os.Stat("/usr/sbin/nginx"); err == nil && st.Mode()&0o111 != 0 {
		return "/usr/sbin/nginx", nil
	}
	return "", ErrNotInstalled
}

// Server is a running nginx. Its methods are safe for concurrent use; Stop
// may be called more than once.
type Server struct {
	// URL is the cache's base URL (http://127.0.0.1:<port>/cache).
	URL string
	// Root is the directory holding the served objects: Root/ac/<hex>,
	// Root/cas/<hex>.
	Root string

	dir     string
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

// Start runs nginx in dir (created if needed) on a free port of 127.0.0.1
// and returns once it accepts connections.
func Start(ctx context.Context, dir string) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	var last error
	for range 3 { // a port picked free can be taken before nginx binds it
		s, err := start(ctx, bin, dir)
		if err == nil {
			return s, nil
		}
		last = err
		if !strings.Contains(err.Error(), "in use") {
			break
		}
	}
	return nil, last
}

func start(ctx context.Context, bin, dir string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("nginx: pick a port: %w", err)
	}
	www := filepath.Join(dir, "www")
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d%s", port, Location),
		Root: filepath.Join(www, strings.TrimPrefix(Location, "/")), dir: dir, exited: make(chan struct{})}
	for _, d := range []string{s.Root, filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("nginx: %w", err)
		}
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(config(dir, www, port)), 0o644); err != nil {
		return nil, fmt.Errorf("nginx: write config: %w", err)
	}
	_ = os.Remove(s.accessLog()) // a restart in the same directory starts a fresh log
	s.cmd = exec.Command(bin, "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log"))
	s.cmd.Stdout, s.cmd.Stderr = nil, nil
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("nginx: start: %w", err)
	}
	go func() { s.waitErr = s.cmd.Wait(); close(s.exited) }()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("nginx: exited at start (%v): %s", s.waitErr, s.errorLog())
		case <-ctx.Done():
			_ = s.Stop()
			return nil, ctx.Err()
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			_ = c.Close() // only the connect mattered
			return s, nil
		}
		if time.Now().After(deadline) {
			_ = s.Stop()
			return nil, fmt.Errorf("nginx: not listening on %s after 10s: %s", addr, s.errorLog())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// config is the whole nginx.conf: one worker, every path inside dir, a
// WebDAV location that takes PUTs, and an access log of method, path and
// status.
func config(dir, www string, port int) string {
	user := ""
	if os.Geteuid() == 0 {
		// As root, workers would switch to nobody and could not write dir.
		user = "user root;\n"
	}
	tmp := filepath.Join(dir, "tmp")
	return user + `worker_processes 1;
daemon off;
pid ` + filepath.Join(dir, "nginx.pid") + `;
error_log ` + filepath.Join(dir, "error.log") + ` warn;
events { worker_connections 256; }
http {
    log_format cuzk '$request_method $uri $status $body_bytes_sent';
    access_log ` + filepath.Join(dir, "access.log") + ` cuzk;
    client_body_temp_path ` + filepath.Join(tmp, "body") + `;
    proxy_temp_path ` + filepath.Join(tmp, "proxy") + `;
    fastcgi_temp_path ` + filepath.Join(tmp, "fastcgi") + `;
    uwsgi_temp_path ` + filepath.Join(tmp, "uwsgi") + `;
    scgi_temp_path ` + filepath.Join(tmp, "scgi") + `;
    client_max_body_size 0;
    server {
        listen 127.0.0.1:` + strconv.Itoa(port) + `;
        location ` + Location + `/ {
            root ` + www + `;
            dav_methods PUT;
            create_full_put_path on;
            dav_access user:rw group:r all:r;
        }
    }
}
`
}

// Stop ends nginx (SIGTERM, then SIGKILL after 5 s) and waits for it.
func (s *Server) Stop() error {
	select {
	case <-s.exited:
		return nil
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("nginx: stop: %w", err)
	}
	select {
	case <-s.exited:
		return nil
	case <-time.After(5 * time.Second):
	}
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("nginx: kill: %w", err)
	}
	<-s.exited
	return nil
}

// Object returns the file that holds the object kind ("ac" or "cas") hexID.
func (s *Server) Object(kind, hexID string) string { return filepath.Join(s.Root, kind, hexID) }

// Request is one line of the access log.
type Request struct {
	Method string
	Path   string
	Status int
	Bytes  int64
}

// Requests returns every request nginx has logged, in order.
func (s *Server) Requests() ([]Request, error) {
	f, err := os.Open(s.accessLog())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("nginx: access log: %w", err)
	}
	defer f.Close()
	var out []Request
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r Request
		if _, err := fmt.Sscanf(sc.Text(), "%s %s %d %d", &r.Method, &r.Path, &r.Status, &r.Bytes); err != nil {
			return nil, fmt.Errorf("nginx: access log line %q: %w", sc.Text(), err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("nginx: access log: %w", err)
	}
	return out, nil
}

func (s *Server) accessLog() string { return filepath.Join(s.dir, "access.log") }

func (s *Server) errorLog() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "error.log")) // only for an error message
	return strings.TrimSpace(string(b))
}

// WaitRequests returns the logged requests once there are at least n, or
// what there is after timeout: nginx writes a request's line just after
// the response has gone, so a client may see the response first.
func (s *Server) WaitRequests(n int, timeout time.Duration) ([]Request, error) {
	deadline := time.Now().Add(timeout)
	for {
		reqs, err := s.Requests()
		if err != nil || len(reqs) >= n || time.Now().After(deadline) {
			return reqs, err
		}
		time.Sleep(10 * time.Millisecond)
	}
}
