// Package deprules holds no code: its test enforces the dependency rules of
// the package map (ARCHITECTURE.md) on the whole module with `go list`.
package deprules
