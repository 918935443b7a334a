package main

import (
	"context"
	"flag"
	"strings"

	"github.com/cuzk-dev/cuzk/internal/report"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
)

var circuitsCommand = &command{name: "circuits", setup: setupCircuits,
	summary: "the circuits a daemon proves, with their parameters and an example",
	detail: `Lists every circuit of the registry with its parameters: the flag that sets each (or
-param NAME=VALUE), its type, range and default, and a command that proves it with the
defaults. Needs no daemon.`}

// circuitParam is one parameter as "cuzk circuits -o json" prints it.
type circuitParam struct {
	Name    string `json:"name"`
	Flag    string `json:"flag"`
	Type    string `json:"type"`
	Min     uint64 `json:"min"`
	Max     uint64 `json:"max"`
	Default uint64 `json:"default"`
	Doc     string `json:"doc"`
}

// circuitInfo is one circuit as "cuzk circuits -o json" prints it.
type circuitInfo struct {
	ID      string         `json:"id"`
	Params  []circuitParam `json:"params"`
	Example string         `json:"example"`
}

// circuitInfos describes the registry's circuits.
func circuitInfos() []circuitInfo {
	var out []circuitInfo
	for _, d := range registry.Default().Definitions() {
		c := circuitInfo{ID: d.ID, Params: []circuitParam{}}
		example := []string{"cuzk", "prove", "-circuit", d.ID}
		for _, p := range d.Params {
			c.Params = append(c.Params, circuitParam{Name: p.Name, Flag: "-" + p.Name, Type: "integer (2^k or decimal)",
				Min: p.Min, Max: p.Max, Default: p.Default, Doc: p.Doc})
			example = append(example, "-"+p.Name, count(p.Default))
		}
		c.Example = strings.Join(example, " ")
		out = append(out, c)
	}
	return out
}

func setupCircuits(*flag.FlagSet) runFunc {
	return func(_ context.Context, e *env, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		infos := circuitInfos()
		if e.out.json {
			return e.out.value(infos)
		}
		t := report.NewTable("circuit", "flag", "type", "range", "default", "what")
		for _, c := range infos {
			for _, p := range c.Params {
				t.Add(c.ID, p.Flag, p.Type, count(p.Min)+".."+count(p.Max), count(p.Default), p.Doc)
			}
		}
		writeTable(e.out, t)
		e.out.text("\nexamples:")
		for _, c := range infos {
			e.out.text("  %s", c.Example)
		}
		e.out.text("\nEvery daemon command that names a circuit (prove, submit, preload, evict, vk) takes these flags.")
		return nil
	}
}
