// Package cluster is the read side of kubectl-slices: it turns a Service into
// reconcile.Input by listing, through the API, the Pods its selector matches
// (server-side, paginated), the Nodes those Pods run on and the Service's
// EndpointSlices of every manager. It also lists the near misses explain
// shows when a selector matches nothing. It writes nothing.
package cluster
