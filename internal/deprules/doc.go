// Package deprules holds no code: its tests hold the package map,
// docs/architecture.md, to the module. Every package has one row there and
// every row a package; the dependency rules written there (standard library
// only, who may import viper, gRPC and dagger, which trees never depend on
// which, and the rules of each row's kind) are checked with `go list`. The
// README's table of binaries is held to the module's commands the same way.
package deprules
