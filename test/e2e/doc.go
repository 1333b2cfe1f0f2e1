// Package e2e tests the built kubectl-slices binary the way a user runs it:
// `kubectl slices ...` through a real kubectl's plugin discovery, against a
// real kube-apiserver and etcd started by package controlplane. There is no
// kube-controller-manager in the shared cluster (the broken cluster the
// plugin repairs); the fidelity tests start their own cluster with
// kube-controller-manager's EndpointSlice controller as the oracle.
package e2e
