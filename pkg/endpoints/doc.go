// Package endpoints plans v1 Endpoints objects the way kube-controller-manager's
// Endpoints controller (pkg/controller/endpoint, Kubernetes 1.36) writes them,
// and repacks Endpoints subsets as upstream's endpoints.RepackSubsets does;
// pkg/mirror uses the same Repack for mirrored EndpointSlices.
//
// Plan takes a Service, the Pods its selector matched, the live Endpoints
// object of the same name (if any) and a few options, and returns the object
// to create or update, or why nothing is written. The rules are upstream's
// syncService: the Pod filter (terminal Pods and Pods without an IP never,
// terminating Pods only with publishNotReadyAddresses), ready Pods (or every
// Pod with publishNotReadyAddresses) under addresses and the rest under
// notReadyAddresses, only the Service's first IP family, hostname when the
// Pod's subdomain names the Service, one subset per distinct set of addresses,
// at most 1000 addresses with the endpoints.kubernetes.io/over-capacity
// annotation, the Service's labels plus the headless label, and the
// last-change-trigger-time annotation. The tolerate-unready-endpoints
// annotation is not honoured: upstream dropped it in favour of
// publishNotReadyAddresses.
//
// Ownership: the object is marked with endpoints.kubernetes.io/managed-by set
// to the caller's value (kubectl-slices by default; upstream writes
// endpoint-controller). An Endpoints object without that exact mark was
// written by someone else (the controller, a person, another tool) and is
// never planned over: the plan says Skip and why.
//
// Deliberate differences from upstream, none about which addresses exist:
// subsets, ports and addresses come out in a fixed order (upstream orders
// subsets and ports by an FNV hash of their printed form), so when more than
// 1000 addresses spread over several subsets are truncated, which subset
// loses addresses first is fixed here and hash-dependent upstream.
//
// Like pkg/reconcile the package imports only k8s.io/api, k8s.io/apimachinery,
// the standard library and pkg/reconcile; it performs no I/O, reads no clock
// and never modifies its input.
package endpoints
