package buildinfo

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// StampVar is the variable the release build sets with -X.
const StampVar = Module + "/internal/buildinfo.stamp"

// stampMagic starts every stamp; the version and commit follow as
// ";version=V;commit=C;". The parser splits on ";" rather than matching
// the whole prefix, so that no string of a binary but the stamp itself
// reads as one (FromBinary counts them).
const stampMagic = "cuzk.buildinfo/v1"

// ErrNoStamp is returned by FromBinary for a binary that carries no stamp
// and by Parse for an empty stamp.
var ErrNoStamp = errors.New("no version stamp")

// Stamp is a version and commit as the release build stamps them.
type Stamp struct {
	// Version is the release version; Commit the source commit (40 lowercase
	// hex digits, or "" when the source had no git commit).
	Version, Commit string
}

var (
	versionRE = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$`)
	commitRE  = regexp.MustCompile(`^(?:[0-9a-f]{40})?$`)
)

// Validate rejects a version outside [0-9A-Za-z.+_-] (at most 64, not
// starting with punctuation: it travels unquoted through -ldflags) and a
// commit that is neither empty nor 40 lowercase hex digits.
func (s Stamp) Validate() error {
	if !versionRE.MatchString(s.Version) {
		return fmt.Errorf("buildinfo: version %q: want 1-64 of [0-9A-Za-z.+_-], starting with a letter or digit", s.Version)
	}
	if !commitRE.MatchString(s.Commit) {
		return fmt.Errorf("buildinfo: commit %q: want 40 lowercase hex digits or nothing", s.Commit)
	}
	return nil
}

// String is the stamp's text, the value of StampVar. (Joined, so that the
// magic and the field names are separate strings in a binary.)
func (s Stamp) String() string {
	return strings.Join([]string{stampMagic, "version=" + s.Version, "commit=" + s.Commit, ""}, ";")
}

// Ldflag returns the linker flag that stamps s into a binary:
// "-X <StampVar>=<s>", to join with the build's other -ldflags. The stamp
// holds no space or quote, so it needs no quoting there.
func (s Stamp) Ldflag() (string, error) {
	if err := s.Validate(); err != nil {
		return "", err
	}
	return "-X " + StampVar + "=" + s.String(), nil
}

// Parse reads a stamp's text; ErrNoStamp when it is empty.
func Parse(text string) (Stamp, error) {
	if text == "" {
		return Stamp{}, ErrNoStamp
	}
	fields := strings.Split(text, ";")
	if len(fields) != 4 || fields[0] != stampMagic || fields[3] != "" {
		return Stamp{}, fmt.Errorf("buildinfo: stamp %q: want %s;version=V;commit=C;", text, stampMagic)
	}
	var s Stamp
	var ok1, ok2 bool
	s.Version, ok1 = strings.CutPrefix(fields[1], "version=")
	s.Commit, ok2 = strings.CutPrefix(fields[2], "commit=")
	if !ok1 || !ok2 {
		return Stamp{}, fmt.Errorf("buildinfo: stamp %q: want %s;version=V;commit=C;", text, stampMagic)
	}
	return s, s.Validate()
}

// FromBinary finds the stamp in a binary's bytes without running it. It
// returns ErrNoStamp when there is none, and an error when there are
// several (a binary carries one: a second would be a forged or glued-on
// one). The scan works on any executable format, stripped or not.
func FromBinary(data []byte) (Stamp, error) {
	// Compiled here, not at package level, so that binaries which never
	// call FromBinary (the daemon) do not carry the pattern.
	re := regexp.MustCompile(regexp.QuoteMeta(stampMagic) + `;version=([0-9A-Za-z][0-9A-Za-z.+_-]{0,63});commit=((?:[0-9a-f]{40})?);`)
	m := re.FindAllSubmatch(data, 3)
	switch len(m) {
	case 0:
		return Stamp{}, ErrNoStamp
	case 1:
		return Stamp{Version: string(m[0][1]), Commit: string(m[0][2])}, nil
	}
	return Stamp{}, fmt.Errorf("buildinfo: %d version stamps in one binary (%q, %q), want one", len(m), m[0][0], m[1][0])
}
