// Package e2enode runs kubectl-slices as real Pods: a control plane, a
// kubelet and containerd built here (hack/build-node.sh), a bridge CNI,
// kube-proxy as kubeadm runs it (a DaemonSet of an image built here with
// Debian's nft, iptables and netbase, as upstream's carries them,
// kubeproxy_image_test.go and kubeproxy_manifests_test.go), and images built
// locally from static binaries. kube-proxy routes every ClusterIP, the
// kubernetes Service's too. CoreDNS runs as kubeadm deploys it (two
// replicas, the kube-dns Service at 10.96.0.10, the kubelets' clusterDNS;
// coredns_manifests_test.go) when KUBECTL_SLICES_COREDNS names
// hack/build-coredns.sh's folder; the DNS tests skip without it.
// `kubectl slices verify` is run against both nodes' kube-proxy and both
// CoreDNS replicas (verify_kubeproxy_test.go), its advice on DRIFT tried
// (rules deleted by hand, both kube-proxies restarted: every Service routed
// again, verify_restart_test.go), and timed over 1,000 Services
// (VERIFY_SERVICES) by BenchmarkVerifyAll beside each node's own listing
// of the same rules (make bench-verify). The kube-proxy alerts of
// monitoring/ are tried with promtool on both kube-proxies' recorded
// samples, one made to fail its restores, the other frozen
// (kubeproxy_stale_alert_test.go; KUBECTL_SLICES_PROMTOOL names
// hack/build-promtool.sh's folder, make e2e-node sets it). It needs root
// and runs in network, mount and
// PID namespaces of its own, so that everything it starts, mounts or routes
// ends with it.
//
// The tests skip unless KUBECTL_SLICES_NODE_BIN_DIR names the node's
// binaries (make e2e-node sets it, and KUBECTL_SLICES_BIN_DIR for the
// control plane).
package e2enode
