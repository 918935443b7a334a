package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/client"
	"github.com/cuzk-dev/cuzk/internal/report"
	"github.com/cuzk-dev/cuzk/internal/stats"
)

var statusCommand = &command{name: "status", daemon: true, setup: setupStatus,
	summary: "the daemon's backend, devices, queue, keys and kernels",
	detail: `Prints the daemon's status: its version and backend, each device (memory, busy share, jobs,
the job it proves now), the queue by priority and stage with the host memory in flight, the
keys and their tiers, and the embedded kernels with the pins that built them. -o json gives
all of it with numbers as numbers.`}

func setupStatus(*flag.FlagSet) runFunc {
	return func(ctx context.Context, e *env, args []string) error {
		out := e.out
		if err := noArgs(args); err != nil {
			return err
		}
		st, err := e.c.GetStatus(ctx, &pb.GetStatusRequest{})
		if err != nil {
			return err
		}
		if out.json {
			return out.message(st)
		}
		writeStatus(out, st)
		return nil
	}
}

func writeStatus(out *output, st *pb.GetStatusResponse) {
	state := ""
	if st.GetDraining() {
		state = ", draining"
	}
	out.text("daemon %s, backend %s, up %s%s", st.GetVersion(), st.GetBackend(), time.Duration(st.GetUptimeNs()).Round(time.Second), state)
	if st.GetCpuReason() != "" {
		out.text("no GPU: %s", st.GetCpuReason())
	}
	devs := report.NewTable("device", "memory", "held", "peak", "busy", "jobs", "proving")
	for _, dv := range st.GetDevices() {
		devs.Add(dv.GetName(), stats.FormatBytes(dv.GetMemoryBytes()), stats.FormatBytes(dv.GetMemoryHeldBytes()),
			stats.FormatBytes(dv.GetMemoryPeakBytes()), fmt.Sprintf("%.0f %%", 100*dv.GetBusyRatio()), fmt.Sprint(dv.GetJobsDone()),
			strings.Join(dv.GetCurrentJobs(), " "))
	}
	writeTable(out, devs)
	q := st.GetQueue()
	out.text("queue: %d critical, %d high, %d normal, %d low (capacity %d); %d synthesizing, %d ready, %d proving; host %s in flight of %s",
		q.GetCritical(), q.GetHigh(), q.GetNormal(), q.GetLow(), q.GetCapacity(), q.GetSynthesizing(), q.GetReady(), q.GetProving(),
		stats.FormatBytes(q.GetHostBytesInFlight()), budget(q.GetHostBudgetBytes()))
	if len(st.GetKeys()) > 0 {
		keys := report.NewTable("key", "tier", "host", "gpu", "refs", "hot on", "development")
		for _, k := range st.GetKeys() {
			keys.Add(k.GetKey(), client.EnumName(k.GetTier()), stats.FormatBytes(k.GetHostBytes()), stats.FormatBytes(k.GetGpuBytes()),
				fmt.Sprint(k.GetRefs()), strings.Join(k.GetHotOn(), ","), fmt.Sprint(k.GetDevelopment()))
		}
		writeTable(out, keys)
	}
	p := st.GetPins()
	out.text("kernels: %d (nvcc %s, archs %s, toolchain %s)", len(st.GetKernels()), p.GetNvccBuild(),
		strings.Join(p.GetArchs(), ","), p.GetToolchain())
}

// budget writes a byte budget, "no bound" for 0.
func budget(b int64) string {
	if b == 0 {
		return "no bound"
	}
	return stats.FormatBytes(b)
}

func writeTable(out *output, t *report.Table) {
	if !out.json {
		_ = t.Write(out.w) // stdout: a failed write has nowhere to be reported
	}
}

var preloadCommand = &command{name: "preload", daemon: true, setup: keySetup("preload"),
	summary: "load a circuit's key into host memory or onto the GPUs",
	detail: `Loads the circuit's proving key to -tier warm (host memory) or hot (on the GPUs; the
default where there are GPUs), generating development keys when there are none on disk,
and prints the key's state.`}

var evictCommand = &command{name: "evict", daemon: true, setup: keySetup("evict"),
	summary: "drop a circuit's key to a lower tier",
	detail: `Drops the circuit's key to -tier warm (off the GPUs) or cold (out of host memory too; the
default) and prints the key's state. A key in use is dropped when its jobs let go of it.`}

func keySetup(name string) func(fs *flag.FlagSet) runFunc {
	return func(fs *flag.FlagSet) runFunc {
		var cf circuitFlags
		cf.add(fs)
		tier := fs.String("tier", "", "preload: warm or hot; evict: warm or cold (default: see above)")
		return func(ctx context.Context, e *env, args []string) error {
			out := e.out
			circ, err := cf.resolve(args)
			if err != nil {
				return err
			}
			t := pb.KeyTier_KEY_TIER_UNSPECIFIED
			if *tier != "" {
				if t, err = enumFlag("tier", *tier, t); err != nil {
					return err
				}
			}
			var info *pb.KeyInfo
			if name == "preload" {
				info, err = e.c.PreloadKey(ctx, &pb.KeyRequest{Circuit: pbCircuit(circ), Tier: t})
			} else {
				info, err = e.c.EvictKey(ctx, &pb.EvictKeyRequest{Circuit: pbCircuit(circ), Tier: t})
			}
			if err != nil {
				return err
			}
			if out.json {
				return out.message(info)
			}
			dev := ""
			if info.GetDevelopment() {
				dev = ", development key"
			}
			out.text("%s %s: host %s, gpu %s, %d refs%s", info.GetKey(), client.EnumName(info.GetTier()),
				stats.FormatBytes(info.GetHostBytes()), stats.FormatBytes(info.GetGpuBytes()), info.GetRefs(), dev)
			return nil
		}
	}
}

var vkCommand = &command{name: "vk", daemon: true, setup: setupVK,
	summary: "a circuit's verifying key",
	detail: `Fetches the circuit's verifying key: -out FILE writes its binary encoding (what
groth16.VerifyingKey reads); -snarkjs FILE writes snarkjs's JSON. Prints its size and sha256;
-o json: the circuit, the sha256, the binary in hex and the snarkjs object.`}

func setupVK(fs *flag.FlagSet) runFunc {
	var cf circuitFlags
	cf.add(fs)
	bin := fs.String("out", "", "write the binary encoding to this file")
	snark := fs.String("snarkjs", "", "write the snarkjs JSON to this file")
	return func(ctx context.Context, e *env, args []string) error {
		out := e.out
		circ, err := cf.resolve(args)
		if err != nil {
			return err
		}
		r, err := e.c.GetVerifyingKey(ctx, &pb.KeyRequest{Circuit: pbCircuit(circ)})
		if err != nil {
			return err
		}
		for path, b := range map[string][]byte{*bin: r.GetBinary(), *snark: []byte(r.GetSnarkjsJson())} {
			if path == "" {
				continue
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				return fmt.Errorf("write %s: %w", path, err)
			}
		}
		sum := sha256.Sum256(r.GetBinary())
		if out.json {
			return out.value(struct {
				Circuit string          `json:"circuit"`
				SHA256  string          `json:"sha256"`
				Binary  string          `json:"binary"`
				Snarkjs json.RawMessage `json:"snarkjs"`
			}{circ.Key, hex.EncodeToString(sum[:]), hex.EncodeToString(r.GetBinary()), json.RawMessage(r.GetSnarkjsJson())})
		}
		out.text("%s: verifying key, %d bytes, sha256 %x", circ.Key, len(r.GetBinary()), sum)
		return nil
	}
}
