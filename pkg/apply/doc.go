// Package apply executes a reconcile.Plan against the API server: creates,
// then updates, then deletes, each phase in parallel, so that a Service never
// has fewer endpoints in the middle of a sync than before or after it. It
// makes no decisions of its own; it only refuses to touch a slice whose
// managed-by label is not the one it was given, and reports per object.
//
// Updates carry the resourceVersion the plan was made from and deletes carry
// it as a precondition, so a concurrent writer causes a Conflict (returned as
// ErrConflict for the caller to re-read and re-plan) instead of being
// overwritten.
package apply
