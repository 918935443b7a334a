package assembly

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// Machine is the memory the daemon's host may give it: the smaller of the
// cgroup's memory limit (v2 memory.max, v1 memory.limit_in_bytes) and
// MemTotal, with where that figure came from.
type Machine struct {
	Bytes  int64
	Source string // "cgroup v2 /sys/fs/cgroup/…/memory.max", "/proc/meminfo MemTotal"
}

// noLimit is what a cgroup v1 reports for "no limit" (the page-rounded
// maximum); anything at or above it means none.
const noLimit = 1 << 60

// ReadMachine reads the machine's memory through root (the host's "/" as
// an fs.FS: os.DirFS("/") in the daemon, a fstest.MapFS in tests).
func ReadMachine(root fs.FS) (Machine, error) {
	total, err := memTotal(root)
	if err != nil {
		return Machine{}, err
	}
	m := Machine{Bytes: total, Source: "/proc/meminfo MemTotal"}
	if lim, src, ok := cgroupLimit(root); ok && lim < m.Bytes {
		m = Machine{Bytes: lim, Source: src}
	}
	return m, nil
}

// Budget is the host budget derived from the machine: its memory less a
// margin for the kernel, the page cache and the process's own overhead
// (a tenth, at least 1 GiB, at most half).
func (m Machine) Budget() int64 {
	margin := min(max(m.Bytes/10, 1<<30), m.Bytes/2)
	return m.Bytes - margin
}

func memTotal(root fs.FS) (int64, error) {
	b, err := fs.ReadFile(root, "proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("machine memory: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("machine memory: /proc/meminfo MemTotal %q: %w", f[1], err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("machine memory: no MemTotal in /proc/meminfo")
}

// cgroupLimit reads the memory limit of the cgroup /proc/self/cgroup
// names, at its own path and, as inside a container, at the hierarchy's
// root; ok is false when there is none.
func cgroupLimit(root fs.FS) (limit int64, source string, ok bool) {
	b, err := fs.ReadFile(root, "proc/self/cgroup")
	if err != nil {
		return 0, "", false // not Linux, or no cgroups: MemTotal alone
	}
	limit = -1
	try := func(file string) {
		v, err := fs.ReadFile(root, strings.TrimPrefix(path.Clean(file), "/"))
		if err != nil {
			return
		}
		s := strings.TrimSpace(string(v))
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n >= noLimit { // "max", or no limit
			return
		}
		if limit < 0 || n < limit {
			limit, source = n, file
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "": // v2
			try("/sys/fs/cgroup" + parts[2] + "/memory.max")
			try("/sys/fs/cgroup/memory.max")
		case hasController(parts[1], "memory"): // v1
			try("/sys/fs/cgroup/memory" + parts[2] + "/memory.limit_in_bytes")
			try("/sys/fs/cgroup/memory/memory.limit_in_bytes")
		}
	}
	if limit < 0 {
		return 0, "", false
	}
	return limit, "cgroup " + source, true
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}
