// Command purity checks that the pure cores stay pure: the non-test files
// of pkg/reconcile, pkg/judge, pkg/outcome, pkg/explain, pkg/mirror, pkg/endpoints, pkg/standby and
// verify's pure parts pkg/verify/proxyexpect, pkg/verify/dnsexpect,
// pkg/verify/proxyread, pkg/verify/verdict, pkg/verify/watch (and of internal/english, which
// they use) import no client, no logger and
// nothing that does I/O, import no project package outside that set, and
// never read the clock. Their callers pass in what
// these packages need (objects read, a trigger time), so a plan is a
// function of its inputs and a test can compute the expected one.
//
// It also checks that the read-only packages (ReadOnly: pkg/webhook,
// pkg/explain, pkg/printers) write nothing: through their project imports
// they reach no package of Writers (pkg/apply, pkg/syncer, ...) and no
// client-go package that can send a write (the clientset, typed, dynamic
// and REST clients, events, leader election), except through Readers
// (pkg/cluster, which only reads).
//
// And it checks that the bottom packages (Bottom: pkg/exit) import no
// project package but Leaves (internal/english): the errors of the writers
// and of pkg/daemon carry their exit class, and pkg/exit maps classes, so
// it never imports them.
//
//	go run ./hack/purity [dir ...]
//
// With no argument it checks those packages from the repository root, the
// read-only rule and the bottom rule; with directories, only purity of those.
// It prints one line per violation and exits 1 when there is any. make lint
// runs it, and its test runs it under go test ./... (make test).
package main

import (
	"fmt"
	"os"
)

// Pure lists the packages held to the rule, relative to the module root.
// internal/english, which they use for their messages, is held to it too.
var Pure = []string{"pkg/reconcile", "pkg/judge", "pkg/outcome", "pkg/explain", "pkg/mirror", "pkg/endpoints", "pkg/standby", "pkg/verify/proxyexpect", "pkg/verify/dnsexpect", "pkg/verify/proxyread", "pkg/verify/verdict", "pkg/verify/watch", "internal/english"}

func main() {
	dirs := os.Args[1:]
	if len(dirs) == 0 {
		dirs = Pure
	}
	bad := 0
	for _, d := range dirs {
		bad += report(Check(d))
	}
	if bad > 0 {
		fmt.Fprintf(os.Stderr, "purity: %d violations: the pure packages must take their inputs from callers\n", bad)
	}
	ro := 0
	if len(os.Args) == 1 {
		ro = report(CheckReadOnly(".", ReadOnly))
	}
	if ro > 0 {
		fmt.Fprintf(os.Stderr, "purity: %d violations: webhook, explain and printers must reach no package that writes\n", ro)
	}
	low := 0
	if len(os.Args) == 1 {
		low = report(CheckBottom(".", Bottom))
	}
	if low > 0 {
		fmt.Fprintf(os.Stderr, "purity: %d violations: pkg/exit sits at the bottom of the import graph: give the error a class instead\n", low)
	}
	if bad+ro+low > 0 {
		os.Exit(1)
	}
}

// report prints violations one a line and counts them; an error exits 2.
func report(v []string, err error) int {
	if err != nil {
		fmt.Fprintln(os.Stderr, "purity:", err)
		os.Exit(2)
	}
	for _, line := range v {
		fmt.Println(line)
	}
	return len(v)
}
