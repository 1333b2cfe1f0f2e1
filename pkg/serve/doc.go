// Package serve bounds what a peer can hold of kubectl-slices' HTTP servers
// (the admission webhook and the /healthz, /readyz and /metrics server):
// header, request, response and idle timeouts, so that a connection that
// sends nothing, or keeps a keep-alive open without using it, is closed;
// and a bound on the connections served at once, so that many peers cannot
// grow the process's file descriptors and memory without limit (in sync
// --watch the servers share a process with the loop they must not starve).
//
// The bound is golang.org/x/net/netutil.LimitListener: past it, new
// connections wait in the kernel's accept queue until one closes, rather
// than being refused, so a legitimate caller is served late, not never,
// and the timeouts say how late at worst.
package serve
