package kbuild

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// Directive is one #include found in a source file.
type Directive struct {
	Path  string // as written between the delimiters
	Angle bool   // <path> rather than "path"
	Line  int    // 1-based line of the directive
}

// ErrComputedInclude reports an #include whose target is a macro: the
// engine cannot know what it names, so it refuses rather than hash too little.
var ErrComputedInclude = errors.New("kbuild: computed #include is not supported")

// ParseIncludes returns the #include directives of C/C++/CUDA source src,
// ignoring comments and joining backslash-continued lines. Directives inside
// #if blocks are all returned: hashing a header that is not compiled in only
// costs a rebuild, hashing too little would ship stale code.
func ParseIncludes(src []byte) ([]Directive, error) {
	var out []Directive
	for _, ln := range logicalLines(src) {
		d, ok, err := parseDirective(ln.text)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", ln.no, err)
		}
		if ok {
			d.Line = ln.no
			out = append(out, d)
		}
	}
	return out, nil
}

type logicalLine struct {
	no   int
	text []byte
}

// logicalLines strips comments (keeping string literals intact) and splits
// src into lines, joining lines that end in a backslash.
func logicalLines(src []byte) []logicalLine {
	var lines []logicalLine
	var cur []byte
	no, start := 1, 1
	inBlock, inStr := false, byte(0)
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			i++
			no++
			continue
		case c == '\n':
			if !inBlock {
				lines = append(lines, logicalLine{start, cur})
				cur, start = nil, no+1
			}
			no++
			inStr = 0
			continue
		case inBlock:
			if c == '*' && i+1 < len(src) && src[i+1] == '/' {
				inBlock = false
				i++
				cur = append(cur, ' ')
			}
			continue
		case inStr != 0:
			if c == '\\' && i+1 < len(src) {
				cur = append(cur, c, src[i+1])
				i++
				continue
			}
			if c == inStr {
				inStr = 0
			}
		case c == '"' || c == '\'':
			inStr = c
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			i--
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			inBlock = true
			i++
			continue
		}
		cur = append(cur, c)
	}
	return append(lines, logicalLine{start, cur})
}

func parseDirective(line []byte) (Directive, bool, error) {
	s := bytes.TrimLeft(line, " \t\v\f\r")
	if len(s) == 0 || s[0] != '#' {
		return Directive{}, false, nil
	}
	s = bytes.TrimLeft(s[1:], " \t\v\f\r")
	rest, ok := bytes.CutPrefix(s, []byte("include"))
	if !ok || (len(rest) > 0 && isIdent(rest[0])) {
		return Directive{}, false, nil // #include_next, #includes, other directives
	}
	rest = bytes.TrimLeft(rest, " \t\v\f\r")
	if len(rest) == 0 {
		return Directive{}, false, fmt.Errorf("#include without a file name")
	}
	var closer byte
	switch rest[0] {
	case '"':
		closer = '"'
	case '<':
		closer = '>'
	default:
		return Directive{}, false, fmt.Errorf("%w: #include %s", ErrComputedInclude, bytes.TrimSpace(rest))
	}
	end := bytes.IndexByte(rest[1:], closer)
	if end <= 0 {
		return Directive{}, false, fmt.Errorf("unterminated or empty #include %s", bytes.TrimSpace(rest))
	}
	return Directive{Path: string(rest[1 : 1+end]), Angle: closer == '>'}, true, nil
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Input is one project file in a unit's source closure.
type Input struct {
	Path string // relative to the root, slash-separated
	Sum  string // hex sha256 of the bytes
}

// scanner resolves and hashes files under root; results are memoized for
// one engine run (files are assumed not to change during a run).
type scanner struct {
	root     string
	includes []string // absolute include directories, in -I order
	mu       sync.Mutex
	files    map[string]*scanned
}

type scanned struct {
	sum  string
	deps []string // absolute paths of resolved project includes
	err  error
}

func newScanner(root string, includes []string) *scanner {
	abs := make([]string, len(includes))
	for i, d := range includes {
		abs[i] = filepath.Join(root, d)
	}
	return &scanner{root: root, includes: abs, files: map[string]*scanned{}}
}

// closure returns the sorted inputs of the file at abs path src: itself and
// every project file it transitively includes.
func (s *scanner) closure(src string) ([]Input, error) {
	seen := map[string]bool{}
	stack := []string{src}
	var out []Input
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[p] {
			continue
		}
		seen[p] = true
		f := s.scan(p)
		if f.err != nil {
			return nil, f.err
		}
		rel, err := filepath.Rel(s.root, p)
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", p, err)
		}
		out = append(out, Input{Path: filepath.ToSlash(rel), Sum: f.sum})
		stack = append(stack, f.deps...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func (s *scanner) scan(path string) *scanned {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.files[path]; ok {
		return f
	}
	f := &scanned{}
	s.files[path] = f
	src, err := os.ReadFile(path)
	if err != nil {
		f.err = fmt.Errorf("scan: %w", err)
		return f
	}
	sum := sha256.Sum256(src)
	f.sum = hex.EncodeToString(sum[:])
	dirs, err := ParseIncludes(src)
	if err != nil {
		f.err = fmt.Errorf("scan %s: %w", s.relName(path), err)
		return f
	}
	for _, d := range dirs {
		if dep, ok := s.resolve(path, d); ok {
			f.deps = append(f.deps, dep)
		}
	}
	return f
}

// resolve finds d as nvcc would: "x" next to the including file first, then
// along the include path; <x> along the include path. Not found means a
// toolkit or system header, which the toolchain identity covers.
func (s *scanner) resolve(from string, d Directive) (string, bool) {
	var dirs []string
	if !d.Angle {
		dirs = append(dirs, filepath.Dir(from))
	}
	for _, dir := range append(dirs, s.includes...) {
		cand := filepath.Join(dir, filepath.FromSlash(d.Path))
		if st, err := os.Stat(cand); err == nil && !st.IsDir() {
			return cand, true
		}
	}
	return "", false
}

func (s *scanner) relName(p string) string {
	if rel, err := filepath.Rel(s.root, p); err == nil {
		return filepath.ToSlash(rel)
	}
	return p
}
