// Package exit holds the exit-code table of kubectl-slices and turns errors
// into the one line a user reads and the code a script reads: what failed,
// on which object, and what to do. Every command maps its errors here, so
// the same failure reads and exits the same in every command.
//
// It sits at the bottom of the import graph: it imports no project package
// (hack/purity checks it). The packages that fail import it instead, and
// their errors carry their Class (a Classed error, or a sentinel made by
// WithClass): apply's conflicts and terminating namespaces, daemon's
// configuration and API errors. exit maps a class to a code and words, so
// that the writers, the long-running process and every command can use the
// one table without exit depending on any of them, and a package that
// learns a new failure says its class where the error is made. What a run
// over several Services exits with is the commands' (pkg/cmd), which know
// its outcomes.
package exit
