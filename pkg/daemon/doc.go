// Package daemon assembles the long-running processes: `sync --watch` (the
// loop, run by hand, as a Deployment or as a sidecar) and `webhook`, and
// `verify --watch` (verify.go: rounds of pkg/verify/probe read from its own
// informers, as pkg/verify/watch schedules and judges their changes, served
// as metrics and recorded as Events on the Nodes; it writes nothing else).
//
// It owns what the parts share and nothing else: the one cluster.Cache and
// its informers, the leader election, the health and metrics server, the
// admission webhook's HTTPS server and the controller's workers, run under
// one errgroup so that any part failing stops the others. The two commands
// differ only in their Config: the webhook alone is a read-only cache and
// the server; the loop adds the controller and, as asked, an election, the
// probes and the webhook served from the same cache.
//
// The order of start-up is part of the contract. Everything a user can get
// wrong (a port taken, a certificate unreadable) fails first, before any API
// request, as a ConfigError; then the rights are checked (Events, the Lease,
// what the informers list and watch), so a missing one is named once instead
// of retried for ever by client-go; the probes answer before the first list
// ("not ready" while the caches fill); the informers start last. A
// ConfigError and an APIError carry their pkg/exit class, so the commands
// report them as a usage and an API error without pkg/exit importing the
// process.
//
// The election's notices and the webhook's lines are printed here, when
// they happen; pkg/printers makes their text.
//
// The process tunes its garbage collector for a resident cache (tuneGC)
// and, once quiet, returns what the caches' filling left behind
// (CollectWhenQuiet, gc.go).
package daemon
