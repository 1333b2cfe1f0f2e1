// Package explain turns a plan and the live EndpointSlices into a Report: why
// each Pod is or is not an endpoint (the planner's own decisions, never a
// second implementation), which managers publish which slices, where the live
// endpoints drift from the desired ones, and one diagnosis with the command
// that repairs it. It is pure: the command reads, this package judges,
// pkg/printers renders. The judgements it shares with other commands (which
// controller publishes a Service, hand-back, how long the controller has
// been behind) are pkg/judge's; it imports no package that writes
// (hack/purity's read-only rule).
//
// Drift is judged on what consumers see. kube-proxy, DNS and meshes merge the
// slices of every manager for a Service, so a desired endpoint that no
// manager publishes is missing, and an endpoint any manager publishes that is
// not desired (its Pod is gone, changed or no longer selected) is stale.
//
// The plan is the current release's controller's. Given the cluster's
// release, VersionNotes says where an older kube-controller-manager would
// publish this Service's endpoints otherwise (the rules that changed since).
//
// From the other end, BuildPod explains one Pod against every Service that
// selects it (each planned with that Pod: the planner decides each Pod on
// its own, so the row is the one a Service's Report shows) and names the
// Services one label away (SelectingServices, the NearMisses rule seen from
// the Pod); BuildIP names every publication of an address and judges it by
// the planner's view of its Service with the Pod that holds the address now.
// BuildPods and IPViews (views.go) get those views from the command's
// Viewer, which plans as it plans (its Endpoints lookup, its options).
//
// The Report is the JSON/YAML schema of `kubectl slices explain -o json`,
// PodReport of `explain pod/NAME` and IPReport of `explain --ip`; field
// names and reason codes are stable.
package explain
