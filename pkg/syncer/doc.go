// Package syncer is the one "sync one Service" of kubectl-slices: load the
// planner's inputs from a Source, plan, apply, and on a write conflict re-read
// and re-plan with backoff. One-shot commands (targeted reads or the cluster
// cache) and the watch loop's workers all call Sync; nothing else plans a
// Service's slices and writes them. The watch loop's plans from a memo (the
// Pods changed since the last sync, reconcile.Memo) come through Sync too,
// as Options.Incremental: written by the same writer, retried in full on a
// conflict, under the managed-by value and trigger time Sync sets for every
// plan. Only deletions are made elsewhere, without a plan: DeleteAll for a
// Service that is gone, and pkg/lifecycle's release and prune.
//
// It plans through the one planner choice every command makes
// (judge.PlanService: mirrored from the Endpoints object for a Service
// without selector, planned from the Pods otherwise), writes each kind of
// slice under judge.ManagedByOf, and reports what it did as pkg/outcome's
// types (Outcome, EndpointsOutcome are aliases), so printers need not
// import it. Sync's hold (Options.Hold) is a policy the caller passes in,
// such as judge.HoldWhereCurrent.
//
// It also decides the endpoints.kubernetes.io/last-change-trigger-time
// stamped on written slices (trigger.go).
package syncer
