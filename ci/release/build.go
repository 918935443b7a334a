package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cuzk-dev/cuzk/ci/oci"
	"github.com/cuzk-dev/cuzk/internal/buildinfo"
	"github.com/cuzk-dev/cuzk/internal/renameio"
)

// SumsFile is the name of the checksum files, inside the bundle and beside it.
const SumsFile = "SHA256SUMS"

// Bundle is a built release.
type Bundle struct {
	// Options are the resolved options the bundle was built with.
	Options Options
	// Files are the bundle's contents, paths relative to the bundle root
	// ("bin/cuzk-daemon", "SHA256SUMS", ...), sorted by path.
	Files []oci.File
	// Archive is the path of <name>.tar.gz; ArchiveSHA256 its hex sha256.
	Archive, ArchiveSHA256 string
	// Sums is the path of the SHA256SUMS file beside the archive.
	Sums string
	// Commit is the source commit stamped into the binaries ("" unknown);
	// Repository the source repository (Make sets it). Both label the image.
	Commit, Repository string
}

// Build compiles opts.Packages, packs them with the extra files into
// OutDir/<name>.tar.gz and writes OutDir/SHA256SUMS. The archive holds
// <name>/bin/<binary>..., the extras, and <name>/SHA256SUMS over the other
// entries. Every binary is stamped with opts.Version and no commit
// (buildinfo; Make stamps the source commit). Files are replaced
// atomically; nothing else in OutDir is touched.
func Build(ctx context.Context, opts Options) (Bundle, error) {
	return build(ctx, opts, "")
}

// build is Build with commit (40 hex, or "" when unknown) stamped into
// every binary beside the version.
func build(ctx context.Context, opts Options, commit string) (Bundle, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return Bundle{}, err
	}
	if err := checkGoVersion(ctx, o); err != nil {
		return Bundle{}, err
	}
	files, err := compile(ctx, o, buildinfo.Stamp{Version: o.Version, Commit: commit})
	if err != nil {
		return Bundle{}, err
	}
	for _, x := range o.Extra {
		data, err := os.ReadFile(x.Src)
		if err != nil {
			return Bundle{}, fmt.Errorf("release extra file: %w", err)
		}
		files = append(files, oci.File{Path: x.Dst, Mode: 0o644, Data: data})
	}
	files = append(files, oci.File{Path: SumsFile, Mode: 0o644, Data: sums(files)})
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	b, err := pack(o, files)
	b.Commit = commit
	return b, err
}

// compile runs go build for every package into a scratch directory, each
// binary stamped with s, and returns the binaries as bin/<name> files.
func compile(ctx context.Context, o Options, s buildinfo.Stamp) ([]oci.File, error) {
	ldflag, err := s.Ldflag()
	if err != nil {
		return nil, fmt.Errorf("release build: %w", err)
	}
	scratch, err := os.MkdirTemp("", "cuzk-release-")
	if err != nil {
		return nil, fmt.Errorf("release scratch dir: %w", err)
	}
	defer os.RemoveAll(scratch) // best effort: only build outputs live here
	env := append(append([]string{}, o.Env...), o.PinnedEnv()...)
	var files []oci.File
	for _, pkg := range o.Packages {
		name := path.Base(pkg)
		out := filepath.Join(scratch, name)
		start := time.Now()
		cmd := exec.CommandContext(ctx, o.Go, stampedArgs(BuildArgs(out, pkg), ldflag)...)
		cmd.Dir, cmd.Env = o.Root, env
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("release build %s: %w\n%s", pkg, err, b)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			return nil, fmt.Errorf("release build %s: %w", pkg, err)
		}
		o.Logger.Info("built", "package", pkg, "bytes", len(data), "duration", time.Since(start))
		files = append(files, oci.File{Path: "bin/" + name, Mode: 0o755, Data: data})
	}
	return files, nil
}

// stampedArgs adds ldflag to the -ldflags of go build arguments args (one
// flag: a second -ldflags would replace the first), or adds one before the
// others when there is none. The stamp comes from the source (version,
// commit), never from the clock, so the bytes stay reproducible.
func stampedArgs(args []string, ldflag string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if v, ok := strings.CutPrefix(a, "-ldflags="); ok {
			out[i] = "-ldflags=" + strings.TrimSpace(v+" "+ldflag)
			return out
		}
	}
	return slices.Insert(out, 1, "-ldflags="+ldflag)
}

// checkGoVersion fails when GoVersion is set and the go command differs.
func checkGoVersion(ctx context.Context, o Options) error {
	if o.GoVersion == "" {
		return nil
	}
	cmd := exec.CommandContext(ctx, o.Go, "env", "GOVERSION")
	cmd.Dir, cmd.Env = o.Root, append(append([]string{}, o.Env...), "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("release: %s env GOVERSION: %w", o.Go, err)
	}
	if got := strings.TrimSpace(string(out)); got != "go"+o.GoVersion {
		return fmt.Errorf("release: go command is %s, pins want go%s (reproducible output needs the pinned release)", got, o.GoVersion)
	}
	return nil
}

// sums returns sha256sum-style lines ("<hex>  <path>\n") sorted by path.
func sums(files []oci.File) []byte {
	lines := make([]string, 0, len(files))
	for _, f := range files {
		sum := sha256.Sum256(f.Data)
		lines = append(lines, hex.EncodeToString(sum[:])+"  "+f.Path+"\n")
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i][66:] < lines[j][66:] })
	return []byte(strings.Join(lines, ""))
}

// pack writes the archive and the outer SHA256SUMS.
func pack(o Options, files []oci.File) (Bundle, error) {
	prefixed := make([]oci.File, len(files))
	for i, f := range files {
		prefixed[i] = oci.File{Path: o.Name() + "/" + f.Path, Mode: f.Mode, Data: f.Data}
	}
	archive, err := oci.TarGz(prefixed, o.Epoch)
	if err != nil {
		return Bundle{}, fmt.Errorf("release archive: %w", err)
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return Bundle{}, fmt.Errorf("release out dir: %w", err)
	}
	archiveName := o.Name() + ".tar.gz"
	sum := sha256.Sum256(archive)
	b := Bundle{Options: o, Files: files, Archive: filepath.Join(o.OutDir, archiveName),
		ArchiveSHA256: hex.EncodeToString(sum[:]), Sums: filepath.Join(o.OutDir, SumsFile)}
	if err := renameio.WriteFile(b.Archive, archive, 0o644); err != nil {
		return Bundle{}, fmt.Errorf("release archive: %w", err)
	}
	if err := renameio.WriteFile(b.Sums, sums([]oci.File{{Path: archiveName, Data: archive}}), 0o644); err != nil {
		return Bundle{}, fmt.Errorf("release sums: %w", err)
	}
	o.Logger.Info("bundle", "archive", b.Archive, "sha256", b.ArchiveSHA256, "bytes", len(archive))
	return b, nil
}

// EpochFromGit returns the committer time of HEAD in the repository at
// root: the conventional SOURCE_DATE_EPOCH for a release.
func EpochFromGit(ctx context.Context, root string) (time.Time, error) {
	cmd := exec.CommandContext(ctx, "git", "-C", root, "log", "-1", "--format=%ct")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return time.Time{}, fmt.Errorf("epoch from git: %w: %s", err, stderr.String())
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("epoch from git: %q: %w", out, err)
	}
	return time.Unix(n, 0).UTC(), nil
}
