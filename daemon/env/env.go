// Package env names the daemon's environment variables: CUZK_DAEMON_ and a
// key of its configuration in upper case (listen: CUZK_DAEMON_LISTEN),
// which cuzk-daemon reads over its config file. It imports only
// internal/environ, so that what sets those variables without running the
// daemon (ci/release's image defaults) names them from here, not by copy.
package env

import (
	"strings"

	"github.com/cuzk-dev/cuzk/internal/environ"
)

// Prefix starts every variable of the daemon's configuration.
const Prefix = "CUZK_DAEMON_"

var _ = environ.RegisterPrefix(Prefix, "the daemon's settings: CUZK_DAEMON_<KEY> for each key of its config (docs/daemon.md)")

// Var is the variable of the configuration key key (as in the config file:
// "http_listen" gives CUZK_DAEMON_HTTP_LISTEN).
func Var(key string) string { return Prefix + strings.ToUpper(key) }
