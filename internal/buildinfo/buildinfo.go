package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// Module is cuzk's module path: the main module of every cuzk binary.
const Module = "github.com/cuzk-dev/cuzk"

// Devel is the version of a binary that was neither stamped nor built as a
// module version.
const Devel = "devel"

// Where Info.From says the version and commit came from.
const (
	// FromStamp: the release build's -ldflags -X stamp.
	FromStamp = "stamp"
	// FromVCS: vcs.revision of a build inside a git checkout.
	FromVCS = "vcs"
	// FromModule: the module version of `go install module@version`.
	FromModule = "module"
	// FromNone: nothing; Version is Devel and Commit is empty.
	FromNone = "none"
)

// Info is what a binary knows of itself. Its JSON form is what
// `cuzk-daemon version -json` prints under "build".
type Info struct {
	// Version is the release version ("v0.1.0"), the module version, or Devel.
	Version string `json:"version"`
	// Commit is the source commit (40 hex digits); "" when unknown.
	Commit string `json:"commit"`
	// Modified is vcs.modified: built from a checkout with uncommitted
	// changes (only a vcs build knows it).
	Modified bool `json:"modified,omitempty"`
	// Go is the Go release that built the binary ("go1.26.8").
	Go string `json:"go"`
	// Module is the main module's path, Path the main package's.
	Module string `json:"module"`
	Path   string `json:"path"`
	// From is FromStamp, FromVCS, FromModule or FromNone.
	From string `json:"from"`
}

// stamp is set by the release build: -X github.com/cuzk-dev/cuzk/internal/buildinfo.stamp=...
// (see Ldflag). Empty in any other build.
var stamp string

var get = sync.OnceValue(func() Info {
	bi, _ := debug.ReadBuildInfo() // nil without build info: fromBuildInfo uses runtime.Version
	return fromBuildInfo(stamp, bi)
})

// Get returns this binary's Info. It is computed once and safe for
// concurrent use.
func Get() Info { return get() }

// fromBuildInfo derives an Info from a stamp and build info (nil when the
// binary has none): the stamp wins; else the module version and the vcs.*
// settings.
func fromBuildInfo(stamp string, bi *debug.BuildInfo) Info {
	info := Info{Version: Devel, Go: runtime.Version(), From: FromNone}
	if bi != nil {
		info.Go, info.Module, info.Path = bi.GoVersion, bi.Main.Path, bi.Path
	}
	if s, err := Parse(stamp); err == nil {
		info.Version, info.Commit, info.From = s.Version, s.Commit, FromStamp
		return info
	}
	if bi == nil {
		return info
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		info.Version, info.From = v, FromModule
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit, info.From = s.Value, FromVCS
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// String is one line for logs and GetStatus:
// "v0.1.0 commit 0123…(40 hex) go1.26.8", with "unknown" for a missing
// commit and "+modified" after one built from a changed checkout.
func (i Info) String() string {
	c := i.Commit
	switch {
	case c == "":
		c = "unknown"
	case i.Modified:
		c += "+modified"
	}
	return fmt.Sprintf("%s commit %s %s", i.Version, c, i.Go)
}
