// Package proxyread reads what a node's service proxy programmed for a set
// of service ports, by name: it derives the chains and map entries
// kube-proxy would program (pkg/proxyexpect's names), asks the node for
// exactly those through a few execs into the node's kube-proxy Pod (a
// constant number per node, whatever the number of Services), and parses the
// answers into a Reading. It never dumps a whole table and never reads
// iptables comments.
//
// The exec itself is the caller's (Exec): this package builds the commands
// and their input and parses their output, so that it is tested without a
// cluster, and so that a broken or hostile node's answer is bounded and
// parsed defensively here, in one place.
package proxyread
