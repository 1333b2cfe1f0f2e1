// Command purity checks that the pure cores stay pure: the non-test files
// of pkg/reconcile, pkg/judge, pkg/outcome, pkg/explain, pkg/mirror, pkg/endpoints, pkg/standby and
// pkg/proxyexpect (and of
// internal/english, which they use) import no client, no logger and
// nothing that does I/O, import no project package outside that set, and
// never read the clock. Their callers pass in what
// these packages need (objects read, a trigger time), so a plan is a
// function of its inputs and a test can compute the expected one.
//
//	go run ./hack/purity [dir ...]
//
// With no argument it checks those packages from the repository root.
// It prints one line per violation and exits 1 when there is any. make lint
// runs it, and its test runs it under go test ./... (make test).
package main

import (
	"fmt"
	"os"
)

// Pure lists the packages held to the rule, relative to the module root.
// internal/english, which they use for their messages, is held to it too.
var Pure = []string{"pkg/reconcile", "pkg/judge", "pkg/outcome", "pkg/explain", "pkg/mirror", "pkg/endpoints", "pkg/standby", "pkg/proxyexpect", "internal/english"}

func main() {
	dirs := os.Args[1:]
	if len(dirs) == 0 {
		dirs = Pure
	}
	bad := 0
	for _, d := range dirs {
		v, err := Check(d)
		if err != nil {
			fmt.Fprintln(os.Stderr, "purity:", err)
			os.Exit(2)
		}
		for _, line := range v {
			fmt.Println(line)
		}
		bad += len(v)
	}
	if bad > 0 {
		fmt.Fprintf(os.Stderr, "purity: %d violations: the pure packages must take their inputs from callers\n", bad)
		os.Exit(1)
	}
}
