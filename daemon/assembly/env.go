package assembly

import "github.com/cuzk-dev/cuzk/internal/environ"

// EnvPrefix starts the variables of Config's keys: CUZK_DAEMON_ and the
// key in upper case (listen: CUZK_DAEMON_LISTEN), which cuzk-daemon reads.
const EnvPrefix = "CUZK_DAEMON_"

var _ = environ.RegisterPrefix(EnvPrefix, "the daemon's settings: CUZK_DAEMON_<KEY> for each key of its config (docs/daemon.md)")
