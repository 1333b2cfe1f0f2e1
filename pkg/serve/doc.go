// Package serve bounds what a peer can hold of kubectl-slices' HTTP servers
// (the admission webhook and the /healthz, /readyz and /metrics server):
// header, request, response and idle timeouts, so that a connection that
// sends nothing, or keeps a keep-alive open without using it, is closed;
// a bound on the connections served at once, so that many peers cannot
// grow the process's file descriptors and memory without limit (in sync
// --watch the servers share a process with the loop they must not starve);
// and a bound per remote IP address, so that one peer cannot take all the
// slots and keep the kubelet's probes and the API server out.
//
// A connection past either bound is accepted and closed at once, not left
// in the kernel's accept queue: see Limits.Listener for why.
package serve
