// Package proxyprobe is the cluster side of `kubectl slices verify`: it
// finds each node's service proxy Pod (kube-proxy in kube-system by its
// k8s-app label or its DaemonSet; Cilium, Calico and kube-router agents are
// recognised and reported as not supported), asks the API server with
// SelfSubjectAccessReviews which tiers the caller may use, and reads each
// kube-proxy node's tiers, least privilege first: /healthz and the health
// check node ports through pods/proxy, the metrics and /proxyMode through a
// port-forward to 127.0.0.1, and the rules through pods/exec with the
// pkg/proxyread reader of the node's mode (/proxyMode's answer, else the
// Pod's --proxy-mode, else the mode of its --config file read through the
// same exec). It never uses nodes/proxy. Run also lists the
// Services' slices and plans them as sync would, writing nothing, asks
// each DNS replica (kube-system, k8s-app=kube-dns) over a port-forward to
// its TCP 53 at the same time as the nodes are read, and
// with --settle reads drifting nodes again after the sync period.
//
// Every node is read within a timeout (each HTTP tier within a quarter of
// it, so that a hung kube-proxy's rules are still read), a bounded number
// at once, and every
// answer is read up to a byte limit: a NotReady, unreachable, slow or
// hostile node is a NodeState with the reason, never a hang or a crash.
// What it read is judged by pkg/verify.
package proxyprobe
