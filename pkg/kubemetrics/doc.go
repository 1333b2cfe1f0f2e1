// Package kubemetrics serves client-go's own metrics (the work queue's, the
// REST client's and the leader election's) under the names and labels
// kube-controller-manager serves them with (k8s.io/component-base's
// definitions), on client_golang registries: the dashboards and alerts a
// platform team already runs on controllers (kubernetes-mixin's
// workqueue_adds_total by name, rest_client_requests_total by code) then
// find the loop as they find the controller manager.
//
// client-go takes the REST client's and the leader election's hooks once
// per process, so their families are process-wide: Register adds them to a
// registry and sets the hooks the first time. The work queue's provider is
// per registry, as each queue names itself.
package kubemetrics
