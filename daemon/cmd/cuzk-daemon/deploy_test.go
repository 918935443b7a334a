package main

// The deployment examples in docs/deploy configure this command, so they
// are checked here, where the daemon's own configuration loader
// (loadOptions: flags and CUZK_DAEMON_* variables, unknown names rejected)
// can read what they pass; a package of its own could not import a main.

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/cuzk-dev/cuzk/daemon/server"
)

// deployDir holds the examples, relative to this package.
var deployDir = filepath.Join("..", "..", "..", "docs", "deploy")

// imageUser is the daemon image's uid (ci/release.ImageUser; the daemon
// may not import ci).
const imageUser = 65532

// k8sObjects decodes every document of a multi-document YAML file into its
// k8s.io/api type, strictly: an unknown or misspelt field fails.
func k8sObjects(t *testing.T, file string) (*appsv1.Deployment, *corev1.Service, *corev1.PersistentVolumeClaim) {
	t.Helper()
	var (
		dep *appsv1.Deployment
		svc *corev1.Service
		pvc *corev1.PersistentVolumeClaim
	)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	for i, doc := range strings.Split(string(data), "\n---\n") {
		var tm metav1.TypeMeta
		require.NoError(t, yaml.Unmarshal([]byte(doc), &tm), "document %d", i)
		var obj any
		switch tm.APIVersion + " " + tm.Kind {
		case "apps/v1 Deployment":
			dep = &appsv1.Deployment{}
			obj = dep
		case "v1 Service":
			svc = &corev1.Service{}
			obj = svc
		case "v1 PersistentVolumeClaim":
			pvc = &corev1.PersistentVolumeClaim{}
			obj = pvc
		default:
			t.Fatalf("document %d: unexpected %s %s", i, tm.APIVersion, tm.Kind)
		}
		require.NoError(t, yaml.UnmarshalStrict([]byte(doc), obj), "document %d (%s)", i, tm.Kind)
	}
	require.NotNil(t, dep, "a Deployment")
	require.NotNil(t, svc, "a Service")
	require.NotNil(t, pvc, "a PersistentVolumeClaim")
	return dep, svc, pvc
}

func portOf(t *testing.T, addr string) int32 {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	require.NoError(t, err, addr)
	n, err := strconv.Atoi(p)
	require.NoError(t, err, addr)
	return int32(n)
}

// TestKubernetesExample decodes docs/deploy/kubernetes.yaml and checks that
// the daemon accepts the container's configuration and that the pieces
// fit: ports, probes, the key volume, the token from a Secret, one GPU.
func TestKubernetesExample(t *testing.T) {
	dep, svc, pvc := k8sObjects(t, filepath.Join(deployDir, "kubernetes.yaml"))
	pod := dep.Spec.Template.Spec
	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]
	require.NotEmpty(t, c.Args)
	require.Equal(t, "serve", c.Args[0])

	var environ []string
	token := false
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			environ = append(environ, e.Name+"=from-a-secret")
			token = token || e.Name == envPrefix+"TOKEN"
		default:
			require.Nil(t, e.ValueFrom, "%s: only Secrets are expected", e.Name)
			environ = append(environ, e.Name+"="+e.Value)
		}
	}
	opts, err := loadConfig(c.Args[1:], environ, io.Discard)
	require.NoError(t, err, "the daemon accepts the container's arguments and environment")

	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
		assert.Contains(t, mounts, v.Name, "volume %s is mounted", v.Name)
	}
	mountOf := func(dir string) (corev1.VolumeMount, corev1.Volume) {
		for _, m := range c.VolumeMounts {
			if m.MountPath == dir {
				return m, volumes[m.Name]
			}
		}
		t.Fatalf("nothing is mounted at %s", dir)
		return corev1.VolumeMount{}, corev1.Volume{}
	}

	t.Run("token from a Secret", func(t *testing.T) {
		if opts.TokenFile != "" {
			m, v := mountOf(path.Dir(opts.TokenFile))
			assert.True(t, m.ReadOnly)
			require.NotNil(t, v.Secret, "token_file %s lies on a Secret volume", opts.TokenFile)
			found := len(v.Secret.Items) == 0
			for _, it := range v.Secret.Items {
				found = found || it.Path == path.Base(opts.TokenFile)
			}
			assert.True(t, found, "the Secret volume holds %s", path.Base(opts.TokenFile))
			require.NotNil(t, v.Secret.DefaultMode)
			assert.Zero(t, *v.Secret.DefaultMode&0o007, "the token is not world-readable")
			token = true
		}
		require.True(t, token, "token_file on a Secret, or CUZK_DAEMON_TOKEN from a Secret")
		assert.ErrorIs(t, server.CheckExposure(opts.Listen, ""), server.ErrExposedWithoutToken,
			"listening on all interfaces: the token is what lets it start")
		assert.NoError(t, server.CheckExposure(opts.Listen, "from-a-secret"))
	})

	t.Run("ports and probes", func(t *testing.T) {
		ports := map[string]int32{}
		for _, p := range c.Ports {
			ports[p.Name] = p.ContainerPort
		}
		assert.Equal(t, portOf(t, opts.Listen), ports["grpc"], "containerPort grpc is the listen port")
		assert.Equal(t, portOf(t, opts.HTTPListen), ports["http"], "containerPort http is the http_listen port")
		httpPort := func(h *corev1.HTTPGetAction) int32 {
			if h.Port.StrVal != "" {
				return ports[h.Port.StrVal]
			}
			return h.Port.IntVal
		}
		require.NotNil(t, c.ReadinessProbe)
		require.NotNil(t, c.ReadinessProbe.HTTPGet, "readiness on /readyz")
		assert.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path)
		assert.Equal(t, ports["http"], httpPort(c.ReadinessProbe.HTTPGet))
		require.NotNil(t, c.LivenessProbe)
		switch l := c.LivenessProbe; {
		case l.GRPC != nil:
			assert.Equal(t, ports["grpc"], l.GRPC.Port, "liveness: the gRPC health service")
			assert.Empty(t, l.GRPC.Service, "liveness asks for the process (\"\"), which stays SERVING while it drains")
		case l.HTTPGet != nil:
			assert.Equal(t, "/healthz", l.HTTPGet.Path)
			assert.Equal(t, ports["http"], httpPort(l.HTTPGet))
		default:
			t.Fatal("liveness: gRPC health or /healthz")
		}
		if s := c.StartupProbe; s != nil && s.HTTPGet != nil {
			assert.Contains(t, []string{"/healthz", "/readyz"}, s.HTTPGet.Path, "probes without the token")
		}
		for _, sp := range svc.Spec.Ports {
			assert.Contains(t, ports, sp.TargetPort.StrVal, "service port %s targets a named container port", sp.Name)
			assert.Equal(t, ports[sp.TargetPort.StrVal], sp.Port, "service port %s", sp.Name)
		}
		for k, v := range svc.Spec.Selector {
			assert.Equal(t, v, dep.Spec.Template.Labels[k], "the Service selects the pods (%s)", k)
			assert.Equal(t, v, dep.Spec.Selector.MatchLabels[k], "the Deployment selects its pods (%s)", k)
		}
	})

	t.Run("key volume, read-only root, one GPU", func(t *testing.T) {
		m, v := mountOf(opts.KeyDir)
		assert.False(t, m.ReadOnly, "keys are written (development keys, imports)")
		require.NotNil(t, v.PersistentVolumeClaim, "keys outlive the pod")
		assert.Equal(t, pvc.Name, v.PersistentVolumeClaim.ClaimName)
		assert.Equal(t, appsv1.RecreateDeploymentStrategyType, dep.Spec.Strategy.Type, "a ReadWriteOnce volume: no surge")

		require.NotNil(t, c.SecurityContext)
		require.NotNil(t, c.SecurityContext.ReadOnlyRootFilesystem)
		assert.True(t, *c.SecurityContext.ReadOnlyRootFilesystem)
		require.NotNil(t, pod.SecurityContext)
		require.NotNil(t, pod.SecurityContext.RunAsUser)
		assert.Equal(t, int64(imageUser), *pod.SecurityContext.RunAsUser)
		require.NotNil(t, pod.SecurityContext.FSGroup)
		assert.Equal(t, int64(imageUser), *pod.SecurityContext.FSGroup, "the volumes are writable/readable by the image's user")

		gpus := c.Resources.Limits["nvidia.com/gpu"]
		assert.Equal(t, int64(1), gpus.Value(), "one GPU")
		require.NotNil(t, pod.TerminationGracePeriodSeconds)
		assert.GreaterOrEqual(t, time.Duration(*pod.TerminationGracePeriodSeconds)*time.Second, opts.DrainTimeout,
			"the pod is killed only after a drain could finish")
	})
}

// unit is a systemd unit file: section → key → values, in order.
type unit map[string]map[string][]string

func readUnit(t *testing.T, file string) unit {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close() // read only
	u := unit{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			require.True(t, ok && section != "", "%s:%d: %q", file, n, line)
			require.False(t, strings.HasSuffix(v, "\\"), "%s:%d: continuation lines are not parsed here", file, n)
			u[section][k] = append(u[section][k], v)
		}
	}
	require.NoError(t, sc.Err())
	return u
}

// expandSpecifiers replaces the unit specifiers the example uses, as a
// system service named name: %d (credentials directory), %S (state root).
func expandSpecifiers(t *testing.T, s, name string) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		require.Less(t, i+1, len(s), "a lone %% in %q", s)
		i++
		switch s[i] {
		case 'd':
			b.WriteString("/run/credentials/" + name)
		case 'S':
			b.WriteString("/var/lib")
		case '%':
			b.WriteByte('%')
		default:
			t.Fatalf("specifier %%%c in %q: teach this test what it expands to", s[i], s)
		}
	}
	return b.String()
}

// TestSystemdExample checks docs/deploy/cuzk-daemon.service: the daemon
// accepts ExecStart's flags, the token file is the LoadCredential, the
// key directory a StateDirectory, the stop timeout covers a drain, and
// systemd-analyze verify finds nothing to say.
func TestSystemdExample(t *testing.T) {
	const name = "cuzk-daemon.service"
	file := filepath.Join(deployDir, name)
	u := readUnit(t, file)
	svc := u["Service"]
	require.NotNil(t, svc, "[Service]")
	require.Len(t, svc["ExecStart"], 1)
	execStart := svc["ExecStart"][0]
	require.NotContains(t, execStart, `"`, "unquoted words: the test splits on spaces")
	args := strings.Fields(expandSpecifiers(t, execStart, name))
	require.GreaterOrEqual(t, len(args), 2)
	assert.Equal(t, "/usr/local/bin/cuzk-daemon", args[0])
	require.Equal(t, "serve", args[1])
	opts, err := loadConfig(args[2:], nil, io.Discard)
	require.NoError(t, err, "the daemon accepts ExecStart's flags")

	creds := map[string]string{}
	for _, c := range svc["LoadCredential"] {
		id, src, ok := strings.Cut(c, ":")
		require.True(t, ok, "LoadCredential=%s", c)
		creds[id] = src
	}
	id, ok := strings.CutPrefix(opts.TokenFile, "/run/credentials/"+name+"/")
	require.True(t, ok, "token_file %q is a credential (%%d/…)", opts.TokenFile)
	assert.Contains(t, creds, id, "LoadCredential=%s:…", id)
	assert.ErrorIs(t, server.CheckExposure(opts.Listen, ""), server.ErrExposedWithoutToken, "all interfaces: the token is needed")
	assert.Equal(t, int32(9820), portOf(t, opts.Listen))
	assert.Equal(t, int32(9821), portOf(t, opts.HTTPListen))

	var states []string
	for _, s := range svc["StateDirectory"] {
		states = append(states, strings.Fields(s)...)
	}
	keyDir, ok := strings.CutPrefix(opts.KeyDir, "/var/lib/")
	require.True(t, ok, "key_dir %q is under the state root (%%S)", opts.KeyDir)
	assert.Contains(t, states, keyDir, "StateDirectory= creates the key directory for the service's user")

	for _, key := range []string{"NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp", "DynamicUser", "CapabilityBoundingSet",
		"RestrictAddressFamilies", "SystemCallFilter", "DevicePolicy"} {
		assert.Contains(t, svc, key, "hardening: %s", key)
	}
	stop := strings.Replace(svc["TimeoutStopSec"][0], "min", "m", 1)
	d, err := time.ParseDuration(stop)
	require.NoError(t, err, "TimeoutStopSec=%s", svc["TimeoutStopSec"][0])
	assert.Greater(t, d, opts.DrainTimeout, "systemd waits for a drain before SIGKILL")

	t.Run("systemd-analyze verify", func(t *testing.T) {
		analyze, err := exec.LookPath("systemd-analyze")
		if err != nil {
			t.Skipf("systemd-analyze not installed (%v): the unit's syntax is not checked here", err)
		}
		// verify wants ExecStart's program to exist: point it at this test
		// binary (the flags were checked above against the daemon's loader).
		self, err := os.Executable()
		require.NoError(t, err)
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		data = bytes.Replace(data, []byte("ExecStart=/usr/local/bin/cuzk-daemon "), []byte("ExecStart="+self+" "), 1)
		tmp := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.WriteFile(tmp, data, 0o644))
		out, err := exec.Command(analyze, "verify", "--man=no", tmp).CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Empty(t, string(out), "systemd-analyze verify warns (unknown keys and bad values are only warnings)")
	})
}
