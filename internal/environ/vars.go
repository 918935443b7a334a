package environ

import (
	"fmt"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// Var is a variable a package declared with Register or RegisterPrefix.
type Var struct {
	Name    string // the variable, or for a prefix the start every name of it shares
	Usage   string // what it does, in a line
	Package string // the import path of the package that declared it: its owner
	Prefix  bool   // Name starts a family of variables (CUZK_DAEMON_LISTEN, ...)
}

var (
	varsMu sync.Mutex
	vars   = map[string]Var{}
	reName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
)

// Register declares the variable name for the calling package, which owns
// it, with a line saying what it does, and returns name. Each package
// declares its own variables once, beside their constant:
//
//	const EnvDir = "CUZK_CACHE"
//
//	var _ = environ.Register(EnvDir, "the kernel cache directory (default ~/.cache/cuzk)")
//
// so that a loader that refuses names it does not know (toolchain's pins)
// can ask whether some package of the program reads one. A name declared
// twice, or not written as an environment variable, panics: a programming
// error caught at start.
func Register(name, usage string) string { return register(name, usage, false) }

// RegisterPrefix declares a family of variables that share a start, as
// Register declares one: the daemon's settings, CUZK_DAEMON_<KEY>.
func RegisterPrefix(prefix, usage string) string { return register(prefix, usage, true) }

func register(name, usage string, prefix bool) string {
	if !reName.MatchString(name) || prefix != strings.HasSuffix(name, "_") || usage == "" {
		panic(fmt.Sprintf("environ: cannot register %q (prefix %v, usage %q): want NAME (a prefix ends in _) and a usage", name, prefix, usage))
	}
	v := Var{Name: name, Usage: usage, Package: callerPackage(3), Prefix: prefix}
	varsMu.Lock()
	defer varsMu.Unlock()
	if old, dup := vars[name]; dup {
		panic(fmt.Sprintf("environ: %s registered by %s and again by %s", name, old.Package, v.Package))
	}
	vars[name] = v
	return name
}

// Lookup returns the declaration that covers name: its own, else the
// longest registered prefix it starts with.
func Lookup(name string) (Var, bool) {
	varsMu.Lock()
	defer varsMu.Unlock()
	if v, ok := vars[name]; ok && !v.Prefix {
		return v, true
	}
	var best Var
	for _, v := range vars {
		if v.Prefix && strings.HasPrefix(name, v.Name) && len(name) > len(v.Name) && len(v.Name) > len(best.Name) {
			best = v
		}
	}
	return best, best.Name != ""
}

// Registered returns every declaration of the program, sorted by name.
func Registered() []Var {
	varsMu.Lock()
	defer varsMu.Unlock()
	out := make([]Var, 0, len(vars))
	for _, v := range vars {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// callerPackage returns the import path of the function skip frames up:
// "example.com/m/pkg.init" or "example.com/m/pkg.init.0" → example.com/m/pkg.
func callerPackage(skip int) string {
	pc, _, _, ok := runtime.Caller(skip)
	if !ok {
		return "?"
	}
	fn := runtime.FuncForPC(pc)
	if fn == nil {
		return "?"
	}
	name := fn.Name()
	slash := strings.LastIndex(name, "/")
	if dot := strings.Index(name[slash+1:], "."); dot >= 0 {
		return name[:slash+1+dot]
	}
	return name
}
