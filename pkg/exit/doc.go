// Package exit holds the exit-code table of kubectl-slices and turns errors
// into the one line a user reads and the code a script reads: what failed,
// on which object, and what to do. Every command maps its errors here, so
// the same failure reads and exits the same in every command.
package exit
