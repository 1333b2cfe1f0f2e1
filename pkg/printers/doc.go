// Package printers renders plans, sync results, diffs and explanations.
// It never decides anything and never writes to the cluster: it holds no
// client. It does import two packages that write, for their types only:
// pkg/syncer (Outcome, EndpointsOutcome: what a sync did) and pkg/apply
// (Result, DryRun). Colour is decided by the caller per stream (see Style)
// so that output redirected to a file or pipe stays plain.
package printers
