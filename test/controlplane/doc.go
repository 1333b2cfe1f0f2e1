// Package controlplane runs a real, local Kubernetes control plane for
// kubectl-slices' e2e tests, benchmarks and demo: etcd and kube-apiserver
// (and, on request, kube-controller-manager with only its EndpointSlice
// controller, the fidelity oracle), built from Go modules by
// hack/build-control-plane.sh.
//
// Everything listens on free 127.0.0.1 ports. The API server runs with RBAC
// and token authentication and knows two users: an admin (system:masters)
// and "limited", who has no rights until a test grants some. Start writes a
// kubeconfig with a context for each. There is no kubelet: Pods are created
// bound to a Node and their status is written through the status
// subresource (see the helpers in fixtures.go).
//
// On request (Options.WebhookClientCert) the API server presents a client
// certificate to every webhook it calls, from an AdmissionConfiguration, as
// a cluster set up for the webhook's --client-ca-file does; the CA and the
// pair are in ControlPlane.WebhookClient.
//
// On request (StartNode, for make e2e-node) real nodes join: containerd
// and a kubelet built by hack/build-node.sh, a bridge CNI, and a loop that
// binds Pods to a node they fit (nodeSelector, required node affinity, pod
// anti-affinity; the first by name among equals) in place of
// kube-scheduler. The kubelets' clusterDNS is NodeOptions.ClusterDNS. The first node changes the network
// and mounts, so it runs only in namespaces of its own (NodeNetwork
// checks); the API server then binds an address Pods can reach
// (Options.BindAddress, AdvertiseAddress). A second node (NodeOptions.Own)
// gets network and mount namespaces of its own inside those, linked and
// routed to the first by a veth pair. No node routes Services: that is
// kube-proxy's, which the tests run as Pods.
//
// For the fault tests (e2e/fault_*_test.go), on request: an audit log of
// the writes of EndpointSlices, Endpoints and Leases (Options.AuditLog,
// read by Audit, audit.go); etcd stopped, started again on its data and
// compacted (etcd.go); kube-controller-manager frozen with SIGSTOP and
// thawed (freeze.go); and a kubeconfig per ServiceAccount, so that each
// client has an identity of its own in the audit log and may reach the API
// server through a proxy of its own (serviceaccount.go). None of it costs
// anything to a control plane that does not use it.
//
// Processes are started in their own process group with a parent-death
// signal, so they end with the test binary even when it is killed; Stop ends
// them and removes their files.
package controlplane
