// Package profiling writes kubectl's --profile profiles of one run: a CPU
// profile of the whole run, or the live heap at its end (after a GC),
// which is what a long-running sync --watch keeps resident; AddFlags adds
// the hidden flags that ask for them to a command tree.
package profiling
