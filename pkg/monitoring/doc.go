// Package monitoring is the one source of the loop's Prometheus rules: the
// alerts a platform team gets when kube-controller-manager fails a Service,
// when the loop itself is in trouble, and when a node's kube-proxy stops
// applying changes, with the recording rules they share. It is pure: `make
// docs` renders it as a plain rules file, and `deploy --monitoring` wraps
// the same groups in a PrometheusRule.
package monitoring
