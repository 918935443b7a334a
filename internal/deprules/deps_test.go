package deprules

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const mod = "github.com/cuzk-dev/cuzk/"

type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Deps         []string
	Standard     bool
}

func listModule(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", mod+"...")
	out, err := cmd.Output()
	require.NoError(t, err)
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkg
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		pkgs = append(pkgs, p)
	}
	require.NotEmpty(t, pkgs)
	return pkgs
}

func under(path, prefix string) bool {
	return path == mod+prefix || strings.HasPrefix(path, mod+prefix+"/")
}

func TestDependencyRules(t *testing.T) {
	pkgs := listModule(t)
	stdOnly := map[string]bool{mod + "toolchain/cas": true, mod + "cuda/driver": true, mod + "internal/renameio": true,
		mod + "internal/stats": true, mod + "internal/structflag": true, mod + "internal/cli": true, mod + "internal/signals": true,
		mod + "internal/progress": true, mod + "internal/environ": true}
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			if imp == "github.com/spf13/viper" {
				assert.True(t, under(p.ImportPath, "toolchain") && !under(p.ImportPath, "toolchain/cas") &&
					!under(p.ImportPath, "toolchain/kbuild") || strings.Contains(p.ImportPath, "/cmd/"),
					"%s imports viper: only toolchain and mains may", p.ImportPath)
			}
			if imp == "google.golang.org/grpc" || strings.HasPrefix(imp, "google.golang.org/grpc/") {
				assert.True(t, under(p.ImportPath, "daemon") || under(p.ImportPath, "bench"),
					"%s imports %s: only daemon/... and the benchmarks that drive it may", p.ImportPath, imp)
			}
			if strings.HasPrefix(imp, "dagger.io/") {
				assert.Equal(t, mod+"ci", p.ImportPath, "%s imports dagger: only ci may", p.ImportPath)
			}
			assert.False(t, strings.Contains(imp, "/cmd/") && strings.HasPrefix(imp, mod), "%s imports a main (%s)", p.ImportPath, imp)
			assert.False(t, under(imp, "magefiles"), "%s imports magefiles", p.ImportPath)
			if p.ImportPath == mod+"daemon/engine" {
				assert.False(t, under(imp, "internal/hostmem") || imp == "unsafe",
					"%s imports %s: the scheduler holds no memory outside the Go heap; its VectorPool (daemon/device) does", p.ImportPath, imp)
			}
			if under(imp, "daemon/device") && under(p.ImportPath, "daemon") {
				assert.Equal(t, mod+"daemon/assembly", p.ImportPath, "%s imports %s: only daemon/assembly opens devices", p.ImportPath, imp)
			}
		}
		for _, dep := range p.Deps {
			if stdOnly[p.ImportPath] {
				// internal/renameio and internal/environ are themselves
				// standard-library only (checked above).
				assert.False(t, strings.Contains(strings.SplitN(dep, "/", 2)[0], ".") && dep != mod+"internal/renameio" && dep != mod+"internal/environ",
					"%s must use only the standard library, depends on %s", p.ImportPath, dep)
			}
			if under(p.ImportPath, "prover") {
				for _, banned := range []string{"daemon", "ci", "toolchain/kbuild", "magefiles"} {
					assert.False(t, under(dep, banned), "%s depends on %s", p.ImportPath, dep)
				}
			}
			if under(p.ImportPath, "toolchain/kbuild") {
				assert.False(t, dep == mod+"cuda", "%s depends on cuda (it embeds kbuild's outputs): use cuda/manifest", p.ImportPath)
			}
			if under(p.ImportPath, "daemon") {
				for _, banned := range []string{"toolchain/kbuild", "ci"} {
					assert.False(t, under(dep, banned), "%s depends on %s", p.ImportPath, dep)
				}
			}
			if p.ImportPath == mod+"daemon/engine" {
				for _, banned := range []string{"cuda", "prover/gpu", "prover/cpu", "daemon/device"} {
					assert.False(t, under(dep, banned), "%s depends on %s: the scheduler knows devices only by its Device interface", p.ImportPath, dep)
				}
			}
		}
	}
}

// TestInternalDependsOnNoTree: the module's top-level internal/ holds what
// every tree shares, so none of its packages, nor their tests, imports a
// package of the module outside internal/. A helper that needs one (a
// harness of prover/r1cs, of ci/sign) lives beside that package instead.
func TestInternalDependsOnNoTree(t *testing.T) {
	for _, p := range listModule(t) {
		if !under(p.ImportPath, "internal") {
			continue
		}
		for _, imps := range [][]string{p.Imports, p.TestImports, p.XTestImports} {
			for _, imp := range imps {
				assert.False(t, strings.HasPrefix(imp, mod) && !under(imp, "internal"),
					"%s imports %s: internal/ depends on no tree of the module; move the package beside what it serves (%s)",
					p.ImportPath, imp, mapFile)
			}
		}
	}
}
