package testreport

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/cuzk-dev/cuzk/internal/environ"
)

// The variables that give a Selection.
const (
	EnvPackages = "CUZK_TEST_PACKAGES"
	EnvRun      = "CUZK_TEST_RUN"
	EnvRace     = "CUZK_TEST_RACE"
)

var (
	_ = environ.Register(EnvPackages, "`go run mage.go test`'s package patterns, separated by spaces (default ./...)")
	_ = environ.Register(EnvRun, "`go run mage.go test`'s go test -run regexp (default: every test)")
	_ = environ.Register(EnvRace, "`go run mage.go test` with Go's race detector when true (default false)")
)

// Selection is the part of the module a test run covers, and how, as
// environment variables give it (EnvPackages, EnvRun, EnvRace).
type Selection struct {
	Packages string // package patterns separated by white space; "" is ./...
	Run      string // a go test -run regexp; "" runs every test
	Race     bool   // with the race detector (go test -race)
}

// Patterns returns the package patterns, ./... when none are given.
func (s Selection) Patterns() []string {
	if p := strings.Fields(s.Packages); len(p) > 0 {
		return p
	}
	return []string{"./..."}
}

// GoTestArgs returns the arguments of `go test` for s: -json for the
// Reporter, -count=1 so every test runs (never a cached result), and the
// timeout. A -run that is not a valid regexp is an error here rather than
// a failure in every package.
func (s Selection) GoTestArgs(timeout time.Duration) ([]string, error) {
	args := []string{"test", "-json", "-count=1", "-timeout", timeout.String()}
	if s.Race {
		args = append(args, "-race")
	}
	if s.Run != "" {
		for _, part := range strings.Split(s.Run, "/") { // go test matches each level apart
			if _, err := regexp.Compile(part); err != nil {
				return nil, fmt.Errorf("testreport: -run %q: %w", s.Run, err)
			}
		}
		args = append(args, "-run", s.Run)
	}
	return append(args, s.Patterns()...), nil
}

// String names the selection in a line of output.
func (s Selection) String() string {
	out := strings.Join(s.Patterns(), " ")
	if s.Race {
		out = "-race " + out
	}
	if s.Run != "" {
		out += " -run " + s.Run
	}
	return out
}
