// Package reconcile is the pure EndpointSlice planner of kubectl-slices.
//
// Compute is the entry point. It takes an Input (one Service, the Pods its
// selector matched, what is known of the Nodes, the EndpointSlices that
// exist for the Service) and Options, and returns a Plan: the slices to
// create, update and delete, the slices left unchanged, a decision for the
// Service, a decision for every Pod and the warnings the upstream controller
// would have logged or returned as errors.
//
// The rules are those of kube-controller-manager's EndpointSlice controller
// (k8s.io/endpointslice Reconciler and pkg/controller/endpointslice syncService,
// Kubernetes 1.36/1.37). Where upstream is random (map iteration, PopAny) this
// package makes a fixed choice, so the same input always gives the same Plan;
// the choices never change how many endpoints or slices there are, only which
// slice an endpoint lands in. Where this package deliberately differs from
// upstream, the difference is about object identity, never about endpoints:
//
//   - ports on new slices keep the Service's port order (upstream orders them by
//     an FNV hash; both group slices by an order-independent key);
//   - a slice recycled from a create into an update carries the resourceVersion
//     of the slice it replaces, so every update is conditional;
//   - a Node that could not be read (as opposed to one that does not exist)
//     never drops a Pod: its zone is kept from the live endpoint, or left unset.
//
// Memo is the watch loop's shortcut through Compute: for a Service whose
// slices are in sync, it plans a change to a few Pods from those Pods alone,
// with Compute's result (TestMemoAgainstCompute holds it to that over random
// event sequences), and declines whatever it cannot vouch for.
//
// The package imports only k8s.io/api, k8s.io/apimachinery and the standard
// library. It performs no I/O, reads no clock and logs nothing: side effects
// are returned as data (decisions and warnings), and its inputs are never
// modified.
package reconcile
