package buildimage

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cuzk-dev/cuzk/ci/debian"
)

// Keyring is Debian's archive keyring, which apt checks the indexes with.
const Keyring = "/usr/share/keyrings/debian-archive-keyring.gpg"

// Spec is what a lock is resolved from: everything in a Lock but the
// closure.
type Spec struct {
	Suite, Architecture string
	Components          []string
	// Mirrors[0] is the main archive (Suite and Suite-updates), Mirrors[1]
	// the security archive (Suite-security).
	Mirrors []string
	Include []string
	Epoch   int64
}

// Spec returns the part of l a new resolution starts from.
func (l Lock) Spec() Spec {
	return Spec{Suite: l.Suite, Architecture: l.Architecture, Components: l.Components,
		Mirrors: l.Mirrors, Include: l.Include, Epoch: l.Epoch}
}

// sourcesList renders the apt sources of s, signed by keyring.
func (s Spec) sourcesList(keyring string) (string, error) {
	if len(s.Mirrors) != 2 {
		return "", fmt.Errorf("resolve: want 2 mirrors (archive, security), have %d", len(s.Mirrors))
	}
	comps := strings.Join(s.Components, " ")
	opt := ""
	if keyring != "" {
		opt = "[signed-by=" + keyring + "] "
	}
	var b strings.Builder
	for _, l := range [][2]string{{s.Mirrors[0], s.Suite}, {s.Mirrors[0], s.Suite + "-updates"}, {s.Mirrors[1], s.Suite + "-security"}} {
		fmt.Fprintf(&b, "deb %s%s %s %s\n", opt, l[0], l[1], comps)
	}
	return b.String(), nil
}

// Resolve computes the lock for s with apt in a throwaway root (nothing on
// the host changes): the closure of Debian's Essential packages, apt and
// s.Include, each at its candidate version, with the sha256 and archive path
// the signed indexes give. It needs apt-get, apt-cache and the network.
func Resolve(ctx context.Context, s Spec) (Lock, error) {
	root, err := os.MkdirTemp("", "cuzk-apt-")
	if err != nil {
		return Lock{}, fmt.Errorf("resolve: %w", err)
	}
	defer os.RemoveAll(root) // a throwaway apt root
	apt, err := newAptRoot(root, s)
	if err != nil {
		return Lock{}, err
	}
	if _, err := apt.run(ctx, "apt-get", "update", "-q"); err != nil {
		return Lock{}, err
	}
	avail, err := apt.run(ctx, "apt-cache", "dumpavail")
	if err != nil {
		return Lock{}, err
	}
	want := append(essential(avail), "apt")
	want = append(want, s.Include...)
	uris, err := apt.run(ctx, "apt-get", append([]string{"install", "--print-uris", "-y", "-q"}, want...)...)
	if err != nil {
		return Lock{}, err
	}
	pkgs, err := parsePrintURIs(uris)
	if err != nil {
		return Lock{}, err
	}
	args := []string{"show"}
	for _, p := range pkgs {
		args = append(args, p.Name+"="+p.Version)
	}
	show, err := apt.run(ctx, "apt-cache", args...)
	if err != nil {
		return Lock{}, err
	}
	if err := fillFromRecords(pkgs, show); err != nil {
		return Lock{}, err
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].Name < pkgs[j].Name })
	l := Lock{Version: LockVersion, Suite: s.Suite, Architecture: s.Architecture, Components: s.Components,
		Mirrors: s.Mirrors, Include: s.Include, Epoch: s.Epoch, Packages: pkgs}
	return l, l.Validate()
}

// aptRoot runs apt with every directory inside one throwaway root.
type aptRoot struct{ root, conf string }

func newAptRoot(root string, s Spec) (aptRoot, error) {
	for _, d := range []string{"etc/apt/apt.conf.d", "etc/apt/preferences.d", "etc/apt/sources.list.d", "etc/apt/trusted.gpg.d",
		"var/lib/dpkg", "var/lib/apt/lists/partial", "var/cache/apt/archives/partial", "var/log/apt"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return aptRoot{}, fmt.Errorf("resolve: %w", err)
		}
	}
	sources, err := s.sourcesList(Keyring)
	if err != nil {
		return aptRoot{}, err
	}
	conf := fmt.Sprintf(`Dir "%s/";
Dir::State::status "%s/var/lib/dpkg/status";
APT::Architecture "%s";
APT::Architectures { "%s"; };
Acquire::Languages "none";
APT::Install-Recommends "false";
Debug::NoLocking "true";
`, root, root, s.Architecture, s.Architecture)
	files := map[string]string{"var/lib/dpkg/status": "", "etc/apt/sources.list": sources, "apt.conf": conf}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			return aptRoot{}, fmt.Errorf("resolve: %w", err)
		}
	}
	return aptRoot{root: root, conf: filepath.Join(root, "apt.conf")}, nil
}

// run runs an apt command with the root's configuration (APT_CONFIG, so the
// host's /etc/apt is never read) and returns its standard output.
func (a aptRoot) run(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "APT_CONFIG="+a.conf, "LC_ALL=C", "DEBIAN_FRONTEND=noninteractive")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("resolve: %s %s: %w\n%s", name, strings.Join(args, " "), err, errb.Bytes())
	}
	return out.String(), nil
}

// essential returns the names of the Essential:yes packages in a
// dumpavail listing, sorted.
func essential(records string) []string {
	set := map[string]bool{}
	for _, r := range splitRecords(records) {
		if r["Essential"] == "yes" {
			set[r["Package"]] = true
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// parsePrintURIs reads `apt-get install --print-uris` lines
// ('URI' name_version_arch.deb size hash) into packages with name, version
// and architecture.
func parsePrintURIs(out string) ([]debian.Package, error) {
	var pkgs []debian.Package
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "'") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 || !strings.HasSuffix(f[1], ".deb") {
			return nil, fmt.Errorf("resolve: unexpected apt line %q", line)
		}
		parts := strings.Split(strings.TrimSuffix(f[1], ".deb"), "_")
		if len(parts) != 3 {
			return nil, fmt.Errorf("resolve: file name %q is not name_version_arch.deb", f[1])
		}
		pkgs = append(pkgs, debian.Package{Name: parts[0], Version: strings.ReplaceAll(parts[1], "%3a", ":"), Arch: parts[2]})
	}
	if len(pkgs) == 0 {
		return nil, errors.New("resolve: apt printed no packages to download")
	}
	return pkgs, nil
}

// fillFromRecords sets each package's sha256 and archive path from
// `apt-cache show` records.
func fillFromRecords(pkgs []debian.Package, records string) error {
	byKey := map[string]map[string]string{}
	for _, r := range splitRecords(records) {
		byKey[r["Package"]+"="+r["Version"]] = r
	}
	for i, p := range pkgs {
		r, ok := byKey[p.Name+"="+p.Version]
		if !ok {
			return fmt.Errorf("resolve: no index record for %s=%s", p.Name, p.Version)
		}
		pkgs[i].SHA256, pkgs[i].Path = r["SHA256"], r["Filename"]
		if pkgs[i].SHA256 == "" || pkgs[i].Path == "" {
			return fmt.Errorf("resolve: %s=%s: index record lacks SHA256 or Filename", p.Name, p.Version)
		}
	}
	return nil
}

// splitRecords parses deb822 stanzas (blank-line separated "Key: value"
// fields; continuation lines are dropped, no field read here has one).
func splitRecords(s string) []map[string]string {
	var out []map[string]string
	cur := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			if len(cur) > 0 {
				out = append(out, cur)
				cur = map[string]string{}
			}
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			if _, dup := cur[k]; !dup {
				cur[k] = strings.TrimSpace(v)
			}
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
