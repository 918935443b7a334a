package ci

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cuzk-dev/cuzk/internal/renameio"
	"github.com/cuzk-dev/cuzk/toolchain/kbuild"
)

// KernelsReportSchema names the format of a KernelsReport file.
const KernelsReportSchema = "cuzk-kernels-report/1"

// KernelsReport is what one kernel build did, as the process that built
// wrote it (`mage kernels` with CUZK_KERNELS_REPORT naming the file). The
// host reads it back from the step's report directory: a pipeline is
// judged by this file, never by what the build printed.
type KernelsReport struct {
	Schema string `json:"schema"`
	// Toolchain says what built: the door's choice, in words.
	Toolchain string `json:"toolchain"`
	Units     int    `json:"units"`
	Hits      int    `json:"hits"`   // units served from a cache, local or remote
	Remote    int    `json:"remote"` // of those, units fetched from the remote cache
	Nvcc      int    `json:"nvcc_runs"`
	Uploaded  int    `json:"uploaded"`
	Written   int    `json:"written"` // files written into cuda/fatbin
	// Kernels holds one entry per unit, in build order.
	Kernels []KernelOutcome `json:"kernels"`
	// Files maps every file of cuda/fatbin after the build (slash path
	// under it) to its sha256.
	Files map[string]string `json:"files"`
	// Started and Finished are the build's clock times where it ran.
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`

	// Cached is the host's reading, never set in the file a step writes
	// (ReadKernelsReport sets it): the report was
	// written before this run began, so the executor served the step from
	// its cache (Dagger does that for an exec whose inputs are unchanged).
	// Every input the step's result depends on is one of its inputs, so a
	// cached report is as valid as a fresh one.
	Cached bool `json:"cached,omitempty"`
}

// KernelOutcome is one unit of a KernelsReport.
type KernelOutcome struct {
	Name     string `json:"name"`
	ActionID string `json:"action_id"`
	// Status is kbuild's: "hit local", "hit remote" or "built".
	Status string `json:"status"`
	// SHA256 is the fatbin's digest.
	SHA256 string `json:"sha256"`
}

// NewKernelsReport describes rep, a finished build by toolchain, with the
// files of its output directory (TreeHashes of cuda/fatbin).
func NewKernelsReport(rep kbuild.Report, toolchain string, files map[string]string, started, finished time.Time) KernelsReport {
	r := KernelsReport{Schema: KernelsReportSchema, Toolchain: toolchain, Units: len(rep.Results), Hits: rep.Hits,
		Remote: rep.Fetched, Nvcc: rep.Compile, Uploaded: rep.Uploaded, Written: rep.Written, Files: files,
		Started: started.UTC(), Finished: finished.UTC()}
	for _, res := range rep.Results {
		sum := sha256.Sum256(res.Fatbin)
		r.Kernels = append(r.Kernels, KernelOutcome{Name: res.Unit.Name, ActionID: res.Unit.ID.String(), Status: string(res.Status),
			SHA256: hex.EncodeToString(sum[:])})
	}
	return r
}

// Write stores r at path atomically.
func (r KernelsReport) Write(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := renameio.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("kernels report: %w", err)
	}
	return nil
}

// ErrNoReport reports that a step that must write a report wrote none.
var ErrNoReport = errors.New("no report")

// ReadKernelsReport reads the report at path and checks its schema and
// counts. began is when the host started the run that should have
// written it: a report finished before then was served from the
// executor's cache (Cached).
func ReadKernelsReport(path string, began time.Time) (KernelsReport, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return KernelsReport{}, fmt.Errorf("kernels report %s: %w: the kernels step did not write one (its mage predates %s?)",
			path, ErrNoReport, "CUZK_KERNELS_REPORT")
	}
	if err != nil {
		return KernelsReport{}, fmt.Errorf("kernels report: %w", err)
	}
	var r KernelsReport
	if err := json.Unmarshal(b, &r); err != nil {
		return KernelsReport{}, fmt.Errorf("kernels report %s: %w", path, err)
	}
	if r.Schema != KernelsReportSchema {
		return KernelsReport{}, fmt.Errorf("kernels report %s: schema %q, want %q", path, r.Schema, KernelsReportSchema)
	}
	if r.Units != len(r.Kernels) || r.Hits > r.Units || r.Remote > r.Hits || r.Started.IsZero() || r.Finished.Before(r.Started) {
		return KernelsReport{}, fmt.Errorf("kernels report %s: inconsistent: %d units, %d kernels listed, %d hits, %d remote, started %s, finished %s",
			path, r.Units, len(r.Kernels), r.Hits, r.Remote, r.Started, r.Finished)
	}
	r.Cached = !began.IsZero() && r.Finished.Before(began)
	return r, nil
}
