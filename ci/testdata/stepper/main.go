// Command stepper is the one program of the executor tests' image: a step
// that reads the caches it was given, adds to the shared one and writes a
// kernels report, or a step that fails with a known stderr.
//
//	stepper run NAME   list /cache/k, add /cache/k/NAME.entry, hash /mod, try to write /mod,
//	                   write /src/result/out.txt and /cuzk-out/kernels.json
//	stepper fail       30 lines on stderr, exit 7
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

type outcome struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

type report struct {
	Schema    string            `json:"schema"`
	Toolchain string            `json:"toolchain"`
	Units     int               `json:"units"`
	Hits      int               `json:"hits"`
	Kernels   []outcome         `json:"kernels"`
	Files     map[string]string `json:"files"`
	Started   time.Time         `json:"started"`
	Finished  time.Time         `json:"finished"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: stepper run NAME | stepper fail")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "fail":
		for i := range 30 {
			fmt.Fprintf(os.Stderr, "stderr line %d\n", i)
		}
		os.Exit(7)
	case "run":
		if err := run(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "stepper:", err)
			os.Exit(1)
		}
	default:
		os.Exit(2)
	}
}

func run(name string) error {
	r := report{Schema: "cuzk-kernels-report/1", Toolchain: "GOPROXY=" + os.Getenv("GOPROXY"), Files: map[string]string{},
		Started: time.Now().UTC()}
	ents, err := os.ReadDir("/cache/k")
	if err != nil {
		return err
	}
	for _, e := range ents {
		r.Kernels = append(r.Kernels, outcome{Name: e.Name(), Status: "hit local"})
	}
	sort.Slice(r.Kernels, func(i, j int) bool { return r.Kernels[i].Name < r.Kernels[j].Name })
	r.Units, r.Hits = len(r.Kernels), len(r.Kernels)
	if err := os.WriteFile("/cache/k/"+name+".entry", []byte("added by "+name), 0o644); err != nil {
		return err
	}
	mods, err := os.ReadDir("/mod")
	if err != nil {
		return err
	}
	for _, m := range mods {
		b, err := os.ReadFile(filepath.Join("/mod", m.Name()))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		r.Files[m.Name()] = hex.EncodeToString(sum[:])
	}
	os.WriteFile("/mod/written-by-step", nil, 0o644) // refused where /mod is read-only; never comes back either way
	if err := os.MkdirAll("/src/result", 0o755); err != nil {
		return err
	}
	if err := os.WriteFile("/src/result/out.txt", []byte(name), 0o644); err != nil {
		return err
	}
	r.Finished = time.Now().UTC()
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return os.WriteFile("/cuzk-out/kernels.json", b, 0o644)
}
