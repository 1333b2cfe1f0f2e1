// Package verify judges whether each node's service proxy programmed what
// the API says, and each DNS replica answers it, the pure core of `kubectl
// slices verify`. Judge takes values (the Services, their EndpointSlices
// and plans, the Nodes, what each node's tiers answered: kube-proxy's
// /healthz, its health check node port counts, its metrics, the rules read
// by pkg/verify/proxyread, and what each DNS replica answered, or why each is
// missing) and returns a row per node, a row per DNS replica, a row per
// Service and a diagnosis with the next command to run.
//
// The expected side is pkg/verify/proxyexpect's, per node. The comparison names
// each missing and extra endpoint of a policy chain, a missing cluster IP
// dispatch and a no-endpoints verdict that should not be there (or should),
// and a health check node port count that differs from the node's local
// ready endpoints. Each Service's slices in the API are also held against
// its plan (the slices sync would leave), as a proxy sees both: the
// endpoints each port reaches from each node; a difference is drift too.
//
// A node that disagrees is PENDING, not DRIFT, when its proxy last synced
// before the Service's slices last changed and its /healthz still says
// healthy (it is within its health timeout, twice its sync period): the
// change is queued, not lost. Without the metrics' last sync time, a
// change younger than the health timeout on a healthy proxy is PENDING.
// A node none of whose rules could be read is UNKNOWN with the reason
// (NotReady, no kube-proxy Pod, a proxy that is not kube-proxy, a tier the
// caller may not use, an answer that was too large, too slow or garbage),
// unless what was read already shows drift.
//
// A DNS replica's answers are held against pkg/verify/dnsexpect's questions
// (DNSQuestions, which the caller asks) per Service, each with its own
// last change, and combined into the replica's verdict; one that could not
// be asked is UNKNOWN with the reason.
//
// It also parses what a node answers (the healthz JSON, a health check
// answer, the Prometheus text of kube-proxy's metrics, read by
// github.com/prometheus/common/expfmt's parser, /proxyMode) defensively:
// the caller bounds the bytes, the parsers never trust them, and an error
// quotes an answer clipped (internal/english).
// The package is pure: no I/O, no clock, inputs never modified.
package verdict
