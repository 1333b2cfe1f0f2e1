// Package cluster is the read side of kubectl-slices. It produces
// reconcile.Input three ways: targeted reads of one Service's Pods (by
// selector, server side, paginated), Nodes and EndpointSlices (Reader); an
// in-memory cache of a namespace or the cluster, filled once by listing or
// kept current by shared informers, with selector matching in memory (Cache,
// with Transform keeping only the fields the planner reads, Pods as compact
// PodRecords (podrecord.go), shared between objects where equal
// (intern.go), and a Pod index
// by namespace, shape and labels for the admission webhook, podgroups.go);
// and local manifests (read_local.go reads them, bounded in size and
// following the context, read_yaml.go a YAML List item by item;
// validate_local.go refuses what the API server
// would). For deploy it lists the Nodes (their Pod CIDRs) and reads a
// workload's pod template (workloads.go). Lists are bounded in pages and refuse a repeated continue token,
// so a hostile server cannot keep a read going. It writes nothing. It also
// makes the plugin's client (client.go: rate limits, protobuf, request
// counting) and quiets client-go's logs unless -v asks for them.
package cluster
