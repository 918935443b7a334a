package toolchain

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"

	envmap "github.com/cuzk-dev/cuzk/internal/environ"
)

//go:embed toolchain.yaml
var defaultPins []byte

// DefaultPins returns the embedded toolchain.yaml.
func DefaultPins() []byte { return append([]byte(nil), defaultPins...) }

// Pins is the typed form of toolchain.yaml. Values are plain and immutable
// once loaded; a Pins is safe to share between goroutines.
type Pins struct {
	Go      string   `mapstructure:"go"`
	CUDA    CUDA     `mapstructure:"cuda"`
	Archs   []string `mapstructure:"archs"`
	PTX     []string `mapstructure:"ptx"`
	Flags   []string `mapstructure:"flags"`
	Defines []string `mapstructure:"defines"`
	Images  Images   `mapstructure:"images"`
	// BasePackages are the Debian packages of the daemon image's base layer.
	BasePackages []DebianPackage `mapstructure:"base_packages"`
	// Remote is the shared kernel cache (remote_cache, remote_cache_upload):
	// configuration, not a pin; no key includes it.
	Remote RemoteCache `mapstructure:",squash"`
}

// DebianPackage pins one Debian package file by version and sha256.
type DebianPackage struct {
	Name    string `mapstructure:"name"`
	Version string `mapstructure:"version"`
	Arch    string `mapstructure:"arch"`
	SHA256  string `mapstructure:"sha256"`
	// Path is the file's path in the Debian archive (pool/main/...).
	Path string `mapstructure:"path"`
}

// CUDA pins the CUDA compiler.
type CUDA struct {
	Release       string `mapstructure:"release"`
	NvccBuild     string `mapstructure:"nvcc_build"`
	Nvcc          string `mapstructure:"nvcc"`
	HostCompiler  string `mapstructure:"host_compiler"`
	DebianPackage string `mapstructure:"debian_package"`
	DebianVersion string `mapstructure:"debian_version"`
	// NvccRelease is nvcc's "release" line and HostCompilerVersion the first
	// `--version` line of the host compiler nvcc runs: with NvccBuild the
	// native toolchain identity, so keys are known without a local nvcc.
	NvccRelease         string `mapstructure:"nvcc_release"`
	HostCompilerVersion string `mapstructure:"host_compiler_version"`
}

// Images pins container images by digest.
type Images struct {
	Build   string `mapstructure:"build"`
	Runtime string `mapstructure:"runtime"`
}

// The variables toolchain reads besides the pins. Other packages declare
// theirs with internal/environ, which the pins loader asks about a CUZK_*
// name that is no pin: it knows only its own.
const (
	EnvPinsFile  = "CUZK_PINS"      // override file with the same keys as toolchain.yaml
	EnvToolchain = "CUZK_TOOLCHAIN" // native | container | auto
	EnvImage     = "CUZK_IMAGE"     // set inside the pinned build container: its image reference
	// EnvRemoteToken is the remote cache's bearer token (never printed).
	EnvRemoteToken = "CUZK_REMOTE_CACHE_TOKEN"
	// EnvExecutor picks how container builds run: dagger, podman or docker
	// (default: the first that answers, in that order).
	EnvExecutor = "CUZK_EXECUTOR"
)

var (
	_ = envmap.Register(EnvPinsFile, "a YAML file overriding toolchain.yaml's pins (same keys)")
	_ = envmap.Register(EnvToolchain, "where kernels are built: native, container or auto (default)")
	_ = envmap.Register(EnvImage, "set inside the pinned build image: its reference, which kernel keys carry")
	_ = envmap.Register(EnvRemoteToken, "the remote kernel cache's bearer token (else ~/.netrc); never printed")
	_ = envmap.Register(EnvExecutor, "what runs the build image: dagger, podman or docker (default: the first that answers)")
)

// envPinPrefix starts the variables named after the pins' keys.
const envPinPrefix = "CUZK_"

// pinVariable is the variable that overrides the pin key: CUZK_ and the
// key in upper case, nested keys joined with "_" (cuda.nvcc: CUZK_CUDA_NVCC).
func pinVariable(key string) string {
	return envPinPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// defaultKeys are the pins' keys, from the embedded toolchain.yaml.
var defaultKeys = sync.OnceValue(func() []string {
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(strings.NewReader(string(defaultPins))); err != nil {
		panic(fmt.Sprintf("toolchain: embedded pins: %v", err)) // TestLoadDefaults fails first
	}
	keys := v.AllKeys()
	sort.Strings(keys)
	return keys
})

// PinVariables returns the variables that override a pin, sorted: one per
// key of toolchain.yaml (CUZK_ARCHS, CUZK_CUDA_NVCC, CUZK_REMOTE_CACHE, ...).
func PinVariables() []string {
	out := []string{}
	for _, k := range defaultKeys() {
		out = append(out, pinVariable(k))
	}
	sort.Strings(out)
	return out
}

// PinVariable returns the variable that overrides the pin key ("archs":
// CUZK_ARCHS), for a program that sets pins in a child's environment. A
// key toolchain.yaml does not have panics: a programming error.
func PinVariable(key string) string {
	if !contains(defaultKeys(), key) {
		panic(fmt.Sprintf("toolchain: no pin %q", key))
	}
	return pinVariable(key)
}

// Load reads the pins: embedded defaults, then the file named by CUZK_PINS if
// set, then CUZK_* variables from environ (nested keys join with "_", e.g.
// CUZK_CUDA_NVCC; lists are comma separated). Unknown keys in the file and
// unknown CUZK_* variables are errors naming the key.
func Load(environ []string) (Pins, error) {
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(strings.NewReader(string(defaultPins))); err != nil {
		return Pins{}, fmt.Errorf("load embedded pins: %w", err)
	}
	env := envmap.Map(environ)
	if path := env[EnvPinsFile]; path != "" {
		if err := mergeFile(v, path); err != nil {
			return Pins{}, err
		}
	}
	if err := applyEnv(v, env); err != nil {
		return Pins{}, err
	}
	var p Pins
	hook := mapstructure.StringToSliceHookFunc(",")
	if err := v.UnmarshalExact(&p, viper.DecodeHook(hook)); err != nil {
		return Pins{}, fmt.Errorf("load pins: %w", err)
	}
	if err := p.Validate(); err != nil {
		return Pins{}, err
	}
	return p, nil
}

// LoadEnv is Load(os.Environ()).
func LoadEnv() (Pins, error) { return Load(os.Environ()) }

func mergeFile(v *viper.Viper, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("load pins override %s: %w", path, err)
	}
	defer f.Close()
	o := viper.New()
	o.SetConfigType("yaml")
	if err := o.ReadConfig(f); err != nil {
		return fmt.Errorf("load pins override %s: %w", path, err)
	}
	known := map[string]bool{}
	for _, k := range v.AllKeys() {
		known[k] = true
	}
	for _, k := range o.AllKeys() {
		if !known[k] {
			return fmt.Errorf("load pins override %s: unknown key %q", path, k)
		}
	}
	if err := v.MergeConfigMap(o.AllSettings()); err != nil {
		return fmt.Errorf("load pins override %s: %w", path, err)
	}
	return nil
}

// applyEnv maps CUZK_<KEY> onto known keys. A CUZK_* name that is no pin
// must be one a package of this program registered (internal/environ);
// any other is an error naming it, so a misspelt pin never goes unnoticed.
func applyEnv(v *viper.Viper, env map[string]string) error {
	byEnv := map[string]string{}
	for _, k := range v.AllKeys() {
		byEnv[pinVariable(k)] = k
	}
	names := make([]string, 0, len(env))
	for name := range env {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !strings.HasPrefix(name, envPinPrefix) {
			continue
		}
		key, ok := byEnv[name]
		if !ok {
			if _, theirs := envmap.Lookup(name); theirs {
				continue
			}
			return fmt.Errorf("load pins: unknown variable %s (pins: %s; others: %s)",
				name, strings.Join(sortedKeys(byEnv), ", "), strings.Join(otherVariables(), ", "))
		}
		val := env[name]
		if reflect.TypeOf(v.Get(key)).Kind() == reflect.Slice {
			v.Set(key, splitList(val))
		} else {
			v.Set(key, val)
		}
	}
	return nil
}

// otherVariables lists the CUZK_* variables the program's packages
// registered ("CUZK_DAEMON_*" for a family).
func otherVariables() []string {
	var out []string
	for _, r := range envmap.Registered() {
		if !strings.HasPrefix(r.Name, envPinPrefix) {
			continue
		}
		if r.Prefix {
			out = append(out, r.Name+"*")
		} else {
			out = append(out, r.Name)
		}
	}
	return out
}

func splitList(s string) []string {
	out := []string{}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		out = append(out, f)
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var (
	reSASS   = regexp.MustCompile(`^sm_([0-9]{2,3})a?$`)
	rePTX    = regexp.MustCompile(`^compute_([0-9]{2,3})a?$`)
	reDigest = regexp.MustCompile(`^[^@\s]+@sha256:[0-9a-f]{64}$`)
	reGo     = regexp.MustCompile(`^1\.[0-9]+(\.[0-9]+)?$`)
	reDefine = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(=.*)?$`)
	reSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// engineFlags are owned by the kernel engine and may not appear in flags.
var engineFlags = []string{"-fatbin", "-gencode", "--generate-code", "-arch", "--gpu-architecture",
	"-code", "--gpu-code", "-o", "--output-file", "-I", "--include-path", "-D", "--define-macro", "-M", "-MD", "-MF"}

// Validate checks every pin and names the first bad key.
func (p Pins) Validate() error {
	var errs []error
	bad := func(key, format string, a ...any) {
		errs = append(errs, fmt.Errorf("pin %s: %s", key, fmt.Sprintf(format, a...)))
	}
	if !reGo.MatchString(p.Go) {
		bad("go", "%q is not a Go version like 1.26.8", p.Go)
	}
	for key, val := range map[string]string{"cuda.release": p.CUDA.Release, "cuda.nvcc_build": p.CUDA.NvccBuild,
		"cuda.nvcc": p.CUDA.Nvcc, "cuda.host_compiler": p.CUDA.HostCompiler,
		"cuda.nvcc_release": p.CUDA.NvccRelease, "cuda.host_compiler_version": p.CUDA.HostCompilerVersion} {
		if val == "" {
			bad(key, "must be set")
		}
	}
	if len(p.Archs) == 0 && len(p.PTX) == 0 {
		bad("archs", "no GPU targets: set archs and/or ptx")
	}
	for _, a := range p.Archs {
		if !reSASS.MatchString(a) {
			bad("archs", "%q is not an SASS target like sm_90", a)
		}
	}
	for _, a := range p.PTX {
		if !rePTX.MatchString(a) {
			bad("ptx", "%q is not a PTX target like compute_90", a)
		}
	}
	for _, f := range p.Flags {
		name, _, _ := strings.Cut(f, "=")
		if contains(engineFlags, name) || strings.HasPrefix(f, "-I") || strings.HasPrefix(f, "-D") {
			bad("flags", "%q is set by the kernel engine (use archs, ptx or defines)", f)
		}
	}
	for _, d := range p.Defines {
		if !reDefine.MatchString(d) {
			bad("defines", "%q is not NAME or NAME=VALUE", d)
		}
	}
	for key, img := range map[string]string{"images.build": p.Images.Build, "images.runtime": p.Images.Runtime} {
		if !reDigest.MatchString(img) {
			bad(key, "%q must be pinned by digest (name:tag@sha256:<64 hex>)", img)
		}
	}
	for i, d := range p.BasePackages {
		if d.Name == "" || d.Version == "" || d.Arch == "" || !reSHA256.MatchString(d.SHA256) {
			bad(fmt.Sprintf("base_packages[%d]", i), "%+v: want name, version, arch and a 64-hex sha256", d)
		}
	}
	if err := p.Remote.validate(); err != nil {
		errs = append(errs, err)
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errors.Join(errs...)
}

// Gencode returns the nvcc -gencode arguments for the pinned targets, SASS
// first then PTX, in pin order.
func (p Pins) Gencode() []string {
	var out []string
	for _, a := range p.Archs {
		out = append(out, "-gencode", "arch=compute_"+strings.TrimPrefix(a, "sm_")+",code="+a)
	}
	for _, a := range p.PTX {
		out = append(out, "-gencode", "arch="+a+",code="+a)
	}
	return out
}
