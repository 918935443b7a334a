// Package environ reads an environment given as "KEY=value" strings (the
// form of os.Environ), which the packages that take their environment as a
// parameter share instead of each parsing it, and keeps the program's
// declarations of the variables it reads: each package registers its own
// (Register, RegisterPrefix), so a loader that refuses unknown names asks
// here instead of listing other packages' names.
package environ

import "strings"

// Map returns the variables of environ by name. An entry without "=" is
// skipped; a later entry for a name replaces an earlier one, as in the
// process environment.
func Map(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}
