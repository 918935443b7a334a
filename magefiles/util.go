//go:build mage

package main

import "strings"

func join(s []string) string { return strings.Join(s, "; ") }
