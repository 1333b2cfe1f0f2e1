// Package apply executes a reconcile.Plan against the API server: creates,
// then updates, then deletes, each phase in parallel, so that a Service never
// has fewer endpoints in the middle of a sync than before or after it. It
// makes no decisions of its own; it only refuses to touch a slice whose
// managed-by label is not the one it was given (a delete may also name the
// other value a run under a controller's value writes, reconcile.OurValues:
// the mirrored slices a Service that gained a selector loses), and reports
// per object.
//
// Updates carry the resourceVersion the plan was made from and deletes carry
// it as a precondition, so a concurrent writer causes a Conflict (returned as
// ErrConflict for the caller to re-read and re-plan) instead of being
// overwritten. Its errors carry their pkg/exit class (a conflict, a
// namespace terminating), so a command exits on them without pkg/exit
// importing the writer.
//
// Interrupted (its context done), Apply starts no new write and gives the
// writes already sent Options.Grace to finish: a request on the wire may be
// made by the server whatever the client does, and only its answer lets it
// be reported.
package apply
