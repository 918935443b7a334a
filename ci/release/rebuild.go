package release

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cuzk-dev/cuzk/ci/sign"
)

// RebuildOptions steer Rebuild.
type RebuildOptions struct {
	// Dir is the release directory to check (already Verified).
	Dir string
	// Repo is the git repository (path or URL) holding the commit.
	Repo string
	// Env is the environment of the rebuild's commands; default
	// os.Environ(). SOURCE_DATE_EPOCH and RELEASE_VERSION are set from the
	// release's provenance.
	Env []string
	// Go is the go command; default "go".
	Go string
	// Verifier checks Dir's signatures before anything else
	// (VerifyRelease); nil skips them only with Unsigned.
	Verifier *sign.Verifier
	// Unsigned allows a nil Verifier: bytes and meaning only.
	Unsigned bool
	// Log, when set, receives each step's name and the rebuild's output
	// as it comes; default: the output only appears with an error.
	Log io.Writer
}

// Rebuild checks Dir as VerifyRelease does (signatures first, with
// Verifier), then clones Repo at the commit the release's provenance names
// into a scratch directory, runs `go run mage.go release` there with the same
// version and epoch, and compares the new release directory with Dir byte
// for byte (SHA256SUMS, every file it lists, and the image layout). The
// first difference is an error naming the file.
func Rebuild(ctx context.Context, o RebuildOptions) error {
	v, err := VerifyRelease(o.Dir, o.Verifier, o.Unsigned)
	if err != nil {
		return err
	}
	if v.Commit == "" {
		return fmt.Errorf("rebuild %s: the provenance names no commit", o.Dir)
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.Go == "" {
		o.Go = "go"
	}
	if st, err := os.Stat(o.Repo); err == nil && st.IsDir() {
		if o.Repo, err = filepath.Abs(o.Repo); err != nil { // the clone runs elsewhere
			return fmt.Errorf("rebuild: %w", err)
		}
	}
	scratch, err := os.MkdirTemp("", "cuzk-rebuild-")
	if err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	defer os.RemoveAll(scratch) // a throwaway clone
	src := filepath.Join(scratch, "src")
	env := append(append([]string{}, o.Env...), EnvSourceDateEpoch+"="+strconv.FormatInt(v.Epoch, 10), EnvVersion+"="+v.Version)
	steps := [][]string{
		{"git", "clone", "-q", "--no-checkout", o.Repo, src},
		{"git", "-C", src, "-c", "advice.detachedHead=false", "checkout", "-q", v.Commit},
		{o.Go, "run", "mage.go", "release"},
	}
	for _, args := range steps {
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir, cmd.Env = src, env
		if args[0] == "git" && args[1] == "clone" {
			cmd.Dir = scratch
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if o.Log != nil {
			fmt.Fprintf(o.Log, "rebuild: %s\n", strings.Join(args, " "))
			w := io.MultiWriter(&out, o.Log)
			cmd.Stdout, cmd.Stderr = w, w
		}
		if err := cmd.Run(); err != nil {
			more := "\n" + out.String()
			if o.Log != nil {
				more = "" // printed already
			}
			return fmt.Errorf("rebuild %s: %s: %w%s", v.Commit, strings.Join(args, " "), err, more)
		}
	}
	return CompareDirs(o.Dir, filepath.Join(src, "dist"))
}

// CompareDirs fails unless two release directories hold the same bytes:
// each file a's SHA256SUMS lists, every file of both image layouts, no
// file in b that a lacks, and SHA256SUMS itself. SHA256SUMS is compared
// last, so that the error names the file that really differs (the SBOM,
// say) rather than the list of checksums that merely follows from it; for
// a JSON or text file it quotes the first differing line.
func CompareDirs(a, b string) error {
	listed, err := checkSums(a)
	if err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(listed))
	image := map[string]bool{}
	for _, root := range []string{a, b} {
		err := filepath.WalkDir(filepath.Join(root, ImageDir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(root, p)
			image[rel] = true
			return err
		})
		if err != nil {
			return fmt.Errorf("compare %s: %w", root, err)
		}
	}
	names = append(names, slices.Sorted(maps.Keys(image))...)
	entries, err := os.ReadDir(b)
	if err != nil {
		return fmt.Errorf("compare %s: %w", b, err)
	}
	for _, e := range entries {
		if _, ok := listed[e.Name()]; !ok && e.Name() != SumsFile && e.Name() != ImageDir {
			return fmt.Errorf("compare: %s is in %s only", e.Name(), b)
		}
	}
	for _, name := range append(names, SumsFile) {
		x, errA := os.ReadFile(filepath.Join(a, name))
		y, errB := os.ReadFile(filepath.Join(b, name))
		switch {
		case errA != nil:
			return fmt.Errorf("compare: %s: %w", name, errA)
		case errB != nil:
			return fmt.Errorf("compare: %s: %w", name, errB)
		case !bytes.Equal(x, y):
			return fmt.Errorf("compare: %s differs between %s and %s (sha256 %s vs %s)%s", name, a, b, sha256Hex(x), sha256Hex(y), firstDiff(name, x, y))
		}
	}
	return nil
}

// firstDiff quotes the first differing line of two JSON or text files, or
// returns "" for other files.
func firstDiff(name string, x, y []byte) string {
	if !strings.HasSuffix(name, ".json") && name != SumsFile {
		return ""
	}
	lx, ly := strings.Split(string(x), "\n"), strings.Split(string(y), "\n")
	for i := 0; i < max(len(lx), len(ly)); i++ {
		var p, q string
		if i < len(lx) {
			p = lx[i]
		}
		if i < len(ly) {
			q = ly[i]
		}
		if p != q {
			return fmt.Sprintf("; line %d: %q vs %q", i+1, strings.TrimSpace(p), strings.TrimSpace(q))
		}
	}
	return ""
}
