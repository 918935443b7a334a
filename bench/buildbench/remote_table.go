package buildbench

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// builds lists the clone builds in table order.
func (r RemoteResult) builds() []CloneBuild {
	out := []CloneBuild{r.Cold, r.Warm}
	if r.FreshGo != nil {
		out = append(out, *r.FreshGo)
	}
	return out
}

// checks evaluates the remote cache's claims: the warm clone compiles
// nothing, meets its wall-time target, writes nothing and gets the cold
// clone's bytes; the no-op build meets its target without a request.
func (r RemoteResult) checks() []Check {
	w := r.Warm
	checks := []Check{
		{w.Compiles == 0 && w.Fetched == w.Units && w.Units > 0,
			fmt.Sprintf("warm remote, no nvcc: %d nvcc runs, %d of %d kernels fetched (target 0 runs, all fetched)", w.Compiles, w.Fetched, w.Units)},
		{w.Wall <= w.Target, fmt.Sprintf("warm remote, no nvcc: go run mage.go build %s, target <= %s", round(w.Wall), round(w.Target))},
		{r.Identical, "warm clone's cuda/fatbin byte-identical to the cold clone's"},
		{r.WarmPuts == 0, fmt.Sprintf("read-only clones wrote %d objects to the server (target 0)", r.WarmPuts)},
		{r.Cold.Uploaded == r.Cold.Units && r.Cold.Units > 0, fmt.Sprintf("cold clone uploaded %d of %d kernels", r.Cold.Uploaded, r.Cold.Units)},
	}
	if f := r.FreshGo; f != nil {
		checks = append(checks, Check{f.Compiles == 0 && f.Wall <= WarmRemoteTarget,
			fmt.Sprintf("warm remote, no nvcc, empty Go caches: %s and %d nvcc runs, target <= %s and 0", round(f.Wall), f.Compiles, round(WarmRemoteTarget))})
	}
	if len(r.NoOp.Runs) > 0 {
		checks = append(checks,
			Check{r.NoOp.Pass(), fmt.Sprintf("%s: median %s of %d runs, target <= %s", r.NoOp.Name, round(r.NoOp.Median()), len(r.NoOp.Runs), round(r.NoOp.Target))},
			Check{r.NoOpRequests == 0, fmt.Sprintf("no-op builds sent %d requests to the remote (target 0)", r.NoOpRequests)})
	}
	return checks
}

// write prints the clone builds as aligned text.
func (r RemoteResult) write(w io.Writer) error {
	fmt.Fprintln(w, "remote kernel cache (private nginx WebDAV server on 127.0.0.1), `go run mage.go build` in fresh clones, all pinned archs")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "build\twall\tkernels\tlocal hits\tremote hits\tnvcc runs\tuploaded\t")
	for _, b := range r.builds() {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t\n", b.Name, round(b.Wall), b.Units, b.Hits-b.Fetched, b.Fetched, b.Compiles, b.Uploaded)
	}
	if len(r.NoOp.Runs) > 0 {
		fmt.Fprintf(tw, "%s (median of %d)\t%s\t\t\t\t\t\t\n", r.NoOp.Name, len(r.NoOp.Runs), round(r.NoOp.Median()))
	}
	return tw.Flush()
}
