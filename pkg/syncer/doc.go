// Package syncer is the one "sync one Service" of kubectl-slices: load the
// planner's inputs from a Source, plan, apply, and on a write conflict re-read
// and re-plan with backoff. One-shot commands (targeted reads or the cluster
// cache) and the watch loop's full syncs call Sync. Two other paths write
// slices without it: the watch loop's incremental sync
// (pkg/controller/incremental.go) plans with reconcile.Memo and writes with
// apply.Apply itself, without Sync's conflict retry (a failed write drops
// the memo, and the retry plans in full through Sync); and release and prune
// (pkg/lifecycle) delete through apply.Apply, planning nothing.
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
