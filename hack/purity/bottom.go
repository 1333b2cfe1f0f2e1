package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Bottom lists the packages at the bottom of the import graph. pkg/exit
// holds the exit codes every package may need: the writers and the
// long-running process import it to give their errors a class, so it may
// import none of them (nor anything that reaches them), or the table of
// codes would depend on the code that fails.
var Bottom = []string{"pkg/exit"}

// Leaves are the project packages a Bottom package may import: leaves
// themselves, held to the same rule.
var Leaves = []string{"internal/english"}

// CheckBottom walks the project imports of each bottom package below root
// (non-test files only) and returns one line per project package it
// imports, directly or through a leaf, that is not a leaf; a package that
// writes (Writers) is named as such.
func CheckBottom(root string, pkgs []string) ([]string, error) {
	var out []string
	for _, pkg := range pkgs {
		seen := map[string]bool{pkg: true}
		queue := [][]string{{pkg}}
		for len(queue) > 0 {
			chain := queue[0]
			queue = queue[1:]
			imps, err := importsOf(filepath.Join(root, chain[len(chain)-1]))
			if err != nil {
				return nil, err
			}
			for _, imp := range imps {
				rel, ok := strings.CutPrefix(imp, module)
				if !ok || seen[rel] {
					continue
				}
				seen[rel] = true
				if slices.Contains(Leaves, rel) {
					queue = append(queue, append(append([]string(nil), chain...), rel))
					continue
				}
				what := "a project package that is not a leaf"
				if slices.Contains(Writers, rel) {
					what = "a package that writes"
				}
				out = append(out, fmt.Sprintf("%s: imports %s (%s)%s", pkg, rel, what, through(chain[1:])))
			}
		}
	}
	return out, nil
}
