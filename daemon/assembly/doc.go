// Package assembly turns a daemon's typed configuration into a running
// daemon, as containerd's cmd/containerd/server does for containerd: it
// checks what the listeners would expose, derives the host budgets from the
// machine (cgroup limit or MemTotal), sets the process's Go memory limit,
// opens the GPUs (or the CPU backend), and wires the key manager
// (daemon/keys), the engine (daemon/engine) and the gRPC service with its
// HTTP endpoints (daemon/server). Drain and Stop take it down.
//
// Config is the one description of the daemon's settings: the command
// cuzk-daemon decodes it with viper from a config file and CUZK_DAEMON_*
// variables, and makes its flags from the same fields (internal/structflag).
package assembly
