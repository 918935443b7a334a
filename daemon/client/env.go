package client

import "github.com/cuzk-dev/cuzk/internal/environ"

// The variables a client reads for its defaults (the command cuzk and
// `go run mage.go status`). EnvToken is the daemon's own token setting (its
// config key token under daemon/env's CUZK_DAEMON_ prefix), which a client
// sends.
const (
	EnvAddr  = "CUZK_ADDR"
	EnvToken = "CUZK_DAEMON_TOKEN"
)

var (
	_ = environ.Register(EnvAddr, "the daemon address(es) clients dial (default 127.0.0.1:9820)")
	_ = environ.Register(EnvToken, "the daemon's bearer token: the daemon's own (key token), and what clients send; never printed")
)
