package main

import (
	"fmt"
	"go/parser"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// ReadOnly lists the packages that must never write to the cluster: explain
// and printers are used by every read-only command (explain, diff, check
// --dry-run), and the admission webhook answers requests with the rights of
// the loop beside it. None of them may import, directly or through other
// project packages, a package that writes.
var ReadOnly = []string{"pkg/webhook", "pkg/explain", "pkg/printers"}

// Writers are the project packages that write to the cluster (or wire up
// those that do). A read-only package reaches none of them.
var Writers = []string{"pkg/apply", "pkg/syncer", "pkg/lifecycle", "pkg/controller", "pkg/daemon", "pkg/deploy", "pkg/cmd"}

// Readers may hold a client although a read-only package reaches them:
// pkg/cluster reads (informer caches, lists, access reviews) and writes
// nothing.
var Readers = []string{"pkg/cluster"}

// clientWrite says whether path is a client-go package that can send a
// write: the clientset and its typed clients, the dynamic, metadata, scale
// and REST clients, and the event recorder and leader election (which
// write Events and Leases).
func clientWrite(path string) bool {
	for _, p := range []string{"k8s.io/client-go/kubernetes", "k8s.io/client-go/dynamic", "k8s.io/client-go/metadata",
		"k8s.io/client-go/scale", "k8s.io/client-go/rest", "k8s.io/client-go/tools/record", "k8s.io/client-go/tools/leaderelection"} {
		if path == p || strings.HasPrefix(path, p+"/") && path != "k8s.io/client-go/kubernetes/scheme" {
			return true
		}
	}
	return false
}

// CheckReadOnly walks the project imports of each read-only package below
// root (non-test files only) and returns one line per way it reaches a
// writer: a package of Writers, or a client-go write path imported by it or
// by a project package it reaches (other than Readers).
func CheckReadOnly(root string, pkgs []string) ([]string, error) {
	imports := map[string][]string{}
	var walk func(pkg string) error
	walk = func(pkg string) error {
		if _, ok := imports[pkg]; ok {
			return nil
		}
		imps, err := importsOf(filepath.Join(root, pkg))
		if err != nil {
			return err
		}
		imports[pkg] = imps
		for _, imp := range imps {
			if rel, ok := strings.CutPrefix(imp, module); ok {
				if err := walk(rel); err != nil {
					return err
				}
			}
		}
		return nil
	}
	var out []string
	for _, pkg := range pkgs {
		if err := walk(pkg); err != nil {
			return nil, err
		}
		out = append(out, reaches(pkg, imports)...)
	}
	return out, nil
}

// reaches lists the writers pkg reaches, each with the chain of imports
// that leads there, in a breadth-first order (the shortest chain first).
func reaches(pkg string, imports map[string][]string) []string {
	var out []string
	seen := map[string]bool{pkg: true}
	queue := [][]string{{pkg}}
	for len(queue) > 0 {
		chain := queue[0]
		queue = queue[1:]
		at := chain[len(chain)-1]
		if len(chain) > 1 && slices.Contains(Writers, at) {
			out = append(out, fmt.Sprintf("%s: reaches %s (a package that writes)%s", pkg, at, through(chain[1:len(chain)-1])))
			continue
		}
		via := through(chain[1:])
		for _, imp := range imports[at] {
			rel, ok := strings.CutPrefix(imp, module)
			if !ok {
				if clientWrite(imp) && !slices.Contains(Readers, at) {
					out = append(out, fmt.Sprintf("%s: reaches %s (a client that can write)%s", pkg, imp, via))
				}
				continue
			}
			if !seen[rel] {
				seen[rel] = true
				queue = append(queue, append(append([]string(nil), chain...), rel))
			}
		}
	}
	return out
}

// through names the project packages an import chain passes, "" for none.
func through(chain []string) string {
	if len(chain) == 0 {
		return ""
	}
	return " through " + strings.Join(chain, " → ")
}

// importsOf returns the sorted imports of the non-test Go files in dir.
func importsOf(dir string) ([]string, error) {
	_, files, err := parseDir(dir, parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, file := range files {
		for _, imp := range file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			set[path] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}
