// Package printers renders plans, sync results, diffs and explanations,
// and the lines of the long-running process: the loop's (loop.go: its
// writes and why they happened, changes.go; notices, errors, reconnects,
// summaries, as text or JSON), the leader election's (election.go) and the
// admission webhook's (webhook.go). Those who print them decide when and
// to which stream; the text is made here, from plain values.
// It never decides anything and never writes to the cluster: it holds no
// client and imports no package that writes (hack/purity's read-only rule
// holds it to that): what a sync did comes as pkg/outcome's types
// (Outcome, EndpointsOutcome, Result, DryRun), of which pkg/syncer's and
// pkg/apply's are aliases. Colour is decided by the caller per stream (see Style)
// so that output redirected to a file or pipe stays plain.
package printers
