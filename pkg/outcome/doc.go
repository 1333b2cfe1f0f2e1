// Package outcome holds the types that say what a write did or would do:
// Outcome (one Service's sync), EndpointsOutcome (its legacy Endpoints
// object), Result (the slices written) and DryRun (whether writes are
// simulated). pkg/syncer and pkg/apply make them (their Outcome, Result and
// DryRun are aliases of these); printers and the read-only commands print
// them without importing a package that writes. Types only: no client, no
// clock (hack/purity holds it to that).
package outcome
